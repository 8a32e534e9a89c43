//! Which subject of a person's life a sentence is about (where they live, their job, their car,
//! their pet, …), offline and in English and Chinese, by the sentence embedding's nearest subject.
//!
//! Two statements that set the same fact can be worded so differently, or be in two languages,
//! that neither their similarity to each other nor to the question tells that they answer the
//! same question ("Settling into the new apartment downtown." and "Where do I live?"). Both are
//! closer, though, to a general description of *where someone lives* than to that of any other
//! subject of a life. [`Subjects`] holds such descriptions for a broad list of the facts people
//! tell about themselves ([`SUBJECTS`]), written generally, in both languages, each embedded
//! once as the mean of its phrases; a sentence, or a question, is on the subject it is nearest
//! to. A few entries describe talk that sets no fact (how the day went, small talk, asking for
//! help), so that such a sentence lands there rather than on the nearest fact.

use std::sync::Arc;

use mnemograph_core::store::{cosine_similarity, DynEmbeddings};
use mnemograph_core::BoxError;
use tokio::sync::OnceCell;

/// One subject: a short name and general phrases about it in English and Chinese.
#[derive(Debug, Clone, Copy)]
pub struct Subject {
    /// A short name, for reports.
    pub name: &'static str,
    /// Whether a statement on it sets a fact about the person (false for talk that sets none).
    pub fact: bool,
    /// General phrases in English.
    pub en: &'static [&'static str],
    /// General phrases in Chinese.
    pub zh: &'static [&'static str],
}

const fn fact(name: &'static str, en: &'static [&'static str], zh: &'static [&'static str]) -> Subject {
    Subject { name, fact: true, en, zh }
}

const fn talk(name: &'static str, en: &'static [&'static str], zh: &'static [&'static str]) -> Subject {
    Subject { name, fact: false, en, zh }
}

/// The subjects of a person's life a statement can set, and talk that sets none.
pub const SUBJECTS: &[Subject] = &[
    fact(
        "home",
        &[
            "where I live",
            "my home town and the city I live in",
            "moving house to another city",
            "my apartment and my address",
            "settling into a new home",
        ],
        &["我住的地方", "我生活的城市", "搬家去另一个城市", "我家的房子和地址", "搬进新家"],
    ),
    fact(
        "origin",
        &["where I was born and grew up", "my nationality and home country"],
        &["我出生和长大的地方", "我的国籍和家乡"],
    ),
    fact(
        "job",
        &[
            "my job and my profession",
            "what I do for a living",
            "changing careers to a new occupation",
            "starting a new job",
            "the company I work for and my position there",
            "I work as a doctor, a plumber, a designer or a manager",
        ],
        &[
            "我的工作和职业",
            "我是做什么的",
            "转行换职业",
            "开始一份新工作",
            "我工作的公司和岗位",
            "我是医生、水管工、设计师或者经理",
        ],
    ),
    fact(
        "vehicle",
        &[
            "my car",
            "the vehicle I own and drive",
            "getting a new car",
            "how I get around: by car, bike, bus or train",
        ],
        &["我的车", "我开的汽车", "买了新车", "我平时怎么出行：开车、骑车还是坐公交地铁"],
    ),
    fact(
        "phone",
        &["my mobile phone", "the smartphone I use", "getting a new phone"],
        &["我的手机", "我用的智能手机", "换了新手机"],
    ),
    fact(
        "computer",
        &["my laptop and computer", "my tablet and gadgets"],
        &["我的笔记本电脑", "我的平板和数码设备"],
    ),
    fact(
        "software",
        &[
            "the software tools I use for programming",
            "my code editor and development setup",
            "the programming language I write in",
            "switching to a different editor or IDE",
            "customising my editor with plugins, themes and settings",
        ],
        &[
            "我编程用的软件工具",
            "我的代码编辑器和开发环境",
            "我用的编程语言",
            "换了一个编辑器",
            "折腾编辑器的插件、主题和配置",
        ],
    ),
    fact(
        "sport",
        &[
            "the sport I do",
            "how I exercise and keep fit",
            "my workouts and training",
            "taking up a new sport",
            "I play football, tennis or basketball, I swim or I run",
        ],
        &[
            "我做的运动",
            "我怎么锻炼身体",
            "我的健身和训练",
            "开始练一项新运动",
            "我打篮球、踢足球、游泳或者跑步",
        ],
    ),
    fact(
        "hobby",
        &["my hobbies and pastimes", "what I do in my free time", "playing games and making things"],
        &["我的爱好", "我业余时间做什么", "玩游戏和手工"],
    ),
    fact("music", &["the music I like", "the instrument I play"], &["我喜欢的音乐", "我会弹的乐器"]),
    fact(
        "reading",
        &["the books and films I like", "my favourite TV series"],
        &["我喜欢的书和电影", "我爱看的电视剧"],
    ),
    fact(
        "diet",
        &["what I eat and my diet", "food I like or avoid", "being vegetarian"],
        &["我的饮食习惯", "我爱吃和不吃的东西", "我吃素"],
    ),
    fact(
        "drinks",
        &["my coffee and tea habits", "what I like to drink"],
        &["我喝咖啡和茶的习惯", "我爱喝的饮料"],
    ),
    fact(
        "health",
        &["my health and medical conditions", "my allergies and medication", "an injury or illness I have"],
        &["我的健康状况和疾病", "我过敏和吃的药", "我受的伤和生的病"],
    ),
    fact("pet", &["my pet", "my dog or my cat and its name"], &["我养的宠物", "我的狗或猫叫什么"]),
    fact(
        "partner",
        &["my partner and my relationship", "being married or single"],
        &["我的伴侣和感情状况", "我结婚了还是单身"],
    ),
    fact(
        "family",
        &["my children and my parents", "my brothers and sisters"],
        &["我的孩子和父母", "我的兄弟姐妹"],
    ),
    fact(
        "education",
        &["my school and university", "what I study and my degree"],
        &["我的学校和大学", "我学的专业和学位"],
    ),
    fact("language", &["the languages I speak", "learning a foreign language"], &["我会说的语言", "学外语"]),
    fact("name", &["my name and what people call me"], &["我的名字和别人怎么称呼我"]),
    fact("age", &["my age and my birthday"], &["我的年龄和生日"]),
    fact(
        "routine",
        &["when I wake up and go to bed", "my working hours and fixed appointments"],
        &["我几点起床几点睡觉", "我的上班时间和固定的安排"],
    ),
    fact(
        "goal",
        &["a goal I am working towards", "training or studying for a race, a test or an exam"],
        &["我正在努力实现的目标", "为比赛或考试做准备"],
    ),
    fact("travel", &["my travel plans and trips", "a holiday I am taking"], &["我的旅行计划", "我要去度假"]),
    fact("money", &["my income and savings", "my bank and my budget"], &["我的收入和存款", "我的银行和预算"]),
    fact(
        "style",
        &["the clothes and style I like", "my favourite colour"],
        &["我喜欢的衣服和风格", "我最喜欢的颜色"],
    ),
    fact("belief", &["my religion and my political views"], &["我的宗教信仰和政治观点"]),
    fact("team", &["the sports team I support"], &["我支持的球队"]),
    talk(
        "day",
        &["feeling busy, stressed or tired", "too many meetings and deadlines"],
        &["忙得很累，压力大", "会太多，事情赶不完"],
    ),
    talk(
        "smalltalk",
        &["small talk about the weather", "saying hello and thanks", "hello, good to see you", "a joke"],
        &["聊天气", "打招呼和道谢", "你好，又见面了", "讲笑话"],
    ),
    talk(
        "asking",
        &["asking for advice or a recommendation", "asking a general knowledge question"],
        &["请你给点建议或推荐", "问一个常识问题"],
    ),
    talk(
        "plans",
        &["my plans for the weekend or the evening", "something I feel like doing to unwind"],
        &["我周末或晚上的打算", "想做点什么放松一下"],
    ),
    talk(
        "errand",
        &["a reminder about an errand", "something I need to do later"],
        &["提醒我办件事", "我待会儿要做的事"],
    ),
];

/// How far below its nearest subject a sentence can match another and still be on that one too:
/// a sentence can be on two subjects ("I teach at the university" is on a job and on a school),
/// and the nearest of two close ones is a matter of wording.
pub const SUBJECT_MARGIN: f64 = 0.05;

/// How far below its nearest subject a question can match another and still ask about that one
/// too: "is there any food that makes me ill?" asks about a diet and about health alike, and a
/// question is short, so it sits between subjects more often than a statement does.
pub const QUESTION_MARGIN: f64 = 0.12;

/// How many subjects a question asks about at most, the nearest first: a question asks about one
/// thing, or sits between two; a vague one ("what am I preparing for?") is about as near to
/// many, and the nearest few stand for it.
pub const QUESTION_SUBJECTS: usize = 2;

/// How a sentence sits among the subjects.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// The nearest subject's index in [`SUBJECTS`].
    pub nearest: usize,
    /// Its cosine similarity to the sentence.
    pub similarity: f64,
    /// The sentence's cosine similarity to each subject, in the order of [`SUBJECTS`].
    pub similarities: Vec<f64>,
}

impl Placement {
    /// The nearest subject, when it is a fact's.
    pub fn fact(&self) -> Option<usize> {
        SUBJECTS[self.nearest].fact.then_some(self.nearest)
    }

    /// Whether the sentence is on `subject`: its nearest subject is a fact's, and `subject` is
    /// that one, or the next nearest within `margin` of it. A sentence sits between two subjects
    /// at most ("I teach at the university" is on a job and on a school); a third that comes as
    /// close is a likeness of words ("lunch with a friend from school" is near food too), not what
    /// it is about. A sentence nearest to talk that sets no fact ("remind me to call my mum") is on
    /// no subject, however close a fact comes.
    pub fn on(&self, subject: usize, margin: f64) -> bool {
        let Some(&similarity) = self.similarities.get(subject) else {
            return false;
        };
        let nearer = self.similarities.iter().filter(|s| **s > similarity).count();
        SUBJECTS[self.nearest].fact && similarity >= self.similarity - margin && nearer <= 1
    }

    /// The fact subjects the sentence is on (see [`on`](Self::on)), nearest first; none when it is
    /// nearest to talk that sets no fact. A question can be on two ("what do I do these days?").
    pub fn facts_on(&self, margin: f64) -> Vec<usize> {
        let mut on: Vec<usize> =
            (0..SUBJECTS.len()).filter(|k| SUBJECTS[*k].fact && self.on(*k, margin)).collect();
        on.sort_by(|a, b| self.similarities[*b].total_cmp(&self.similarities[*a]));
        on
    }

    /// Whether the sentence is on one of `subjects`.
    pub fn on_any(&self, subjects: &[usize], margin: f64) -> bool {
        subjects.iter().any(|k| self.on(*k, margin))
    }
}

/// The subjects' vectors, embedded on first use with the memory's model. Clones share them.
#[derive(Clone)]
pub struct Subjects {
    /// The model.
    embed: Arc<dyn DynEmbeddings>,
    /// One vector per subject: the normalised mean of its phrases' vectors.
    vectors: Arc<OnceCell<Vec<Vec<f32>>>>,
}

impl std::fmt::Debug for Subjects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subjects").field("embedded", &self.vectors.initialized()).finish_non_exhaustive()
    }
}

impl Subjects {
    /// The subjects of [`SUBJECTS`], embedded with `embed` when first needed.
    pub fn new(embed: Arc<dyn DynEmbeddings>) -> Self {
        Self { embed, vectors: Arc::default() }
    }

    /// The subjects' vectors, embedding them the first time.
    async fn vectors(&self) -> Result<&[Vec<f32>], BoxError> {
        let vectors = self
            .vectors
            .get_or_try_init(|| async {
                let phrases: Vec<String> =
                    SUBJECTS.iter().flat_map(|s| s.en.iter().chain(s.zh)).map(|p| (*p).to_owned()).collect();
                let embedded = self.embed.embed_documents(&phrases).await?;
                let mut at = 0;
                let means = SUBJECTS
                    .iter()
                    .map(|s| {
                        let n = s.en.len() + s.zh.len();
                        let mean = mean_direction(&embedded[at..at + n]);
                        at += n;
                        mean
                    })
                    .collect();
                Ok::<_, BoxError>(means)
            })
            .await?;
        Ok(vectors)
    }

    /// Where the sentence of vector `v` sits.
    ///
    /// # Errors
    /// The model's failure, the first time.
    pub async fn place(&self, v: &[f32]) -> Result<Placement, BoxError> {
        let vectors = self.vectors().await?;
        Ok(nearest(vectors, v))
    }

    /// Where each of `vs` sits.
    ///
    /// # Errors
    /// The model's failure, the first time.
    pub async fn place_all(&self, vs: &[&[f32]]) -> Result<Vec<Placement>, BoxError> {
        let vectors = self.vectors().await?;
        Ok(vs.iter().map(|v| nearest(vectors, v)).collect())
    }
}

/// The subject of `vectors` nearest to `v`.
fn nearest(vectors: &[Vec<f32>], v: &[f32]) -> Placement {
    let similarities: Vec<f64> = vectors.iter().map(|s| cosine_similarity(s, v)).collect();
    let (nearest, similarity) = similarities
        .iter()
        .copied()
        .enumerate()
        .fold((0, f64::MIN), |best, (i, s)| if s > best.1 { (i, s) } else { best });
    Placement { nearest, similarity, similarities }
}

/// The mean of `vectors`, scaled to unit length.
fn mean_direction(vectors: &[Vec<f32>]) -> Vec<f32> {
    let dims = vectors.first().map_or(0, Vec::len);
    let mut mean = vec![0.0f32; dims];
    for v in vectors {
        for (m, x) in mean.iter_mut().zip(v) {
            *m += x;
        }
    }
    let norm = mean.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        mean.iter_mut().for_each(|m| *m /= norm);
    }
    mean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subject_is_described_in_both_languages() {
        let mut names: Vec<&str> = SUBJECTS.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SUBJECTS.len(), "names are unique");
        assert!(SUBJECTS.iter().all(|s| !s.en.is_empty() && !s.zh.is_empty()));
        assert!(SUBJECTS.iter().filter(|s| s.fact).count() >= 25, "a broad list of facts");
    }

    #[test]
    fn the_mean_direction_has_unit_length() {
        let mean = mean_direction(&[vec![1.0, 0.0], vec![0.0, 1.0]]);
        assert!((mean[0] - mean[1]).abs() < 1e-6 && (mean[0] * mean[0] * 2.0 - 1.0).abs() < 1e-5);
        let placed = nearest(&[vec![1.0, 0.0], mean], &[0.6, 0.8]);
        assert_eq!(placed.nearest, 1);
    }
}
