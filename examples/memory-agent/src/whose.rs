//! Whose fact a sentence states: the user's own, someone else's the user tells about ("my
//! sister works as an accountant", "我邻居刚买了一辆车"), or nobody's: a remark on a thing or an
//! event ("There's a swimming event in the park this Sunday.", "I read an article about housing
//! prices in Chengdu.", "公交站到处都是小米14的广告。"). Offline, in English and Chinese.
//!
//! A question about the user ("what car do I drive?") is answered by what the user said about
//! themselves; a sentence about a neighbour's car, or about an article on cars, names the same
//! things and would otherwise compete with it on equal terms. Recall puts the user's own
//! statements first for such a question, and the others after them, still there for a question
//! about that person or that article.

use crate::question::words;

/// People a user talks about, in English. A sentence that opens with "my" or "our" and one of
/// these is about that person.
const RELATIONS_EN: &[&str] = &[
    "aunt",
    "boss",
    "boyfriend",
    "brother",
    "brothers",
    "child",
    "children",
    "classmate",
    "colleague",
    "colleagues",
    "coworker",
    "coworkers",
    "cousin",
    "cousins",
    "dad",
    "daughter",
    "father",
    "friend",
    "friends",
    "girlfriend",
    "grandfather",
    "grandma",
    "grandmother",
    "grandpa",
    "husband",
    "kid",
    "kids",
    "manager",
    "mom",
    "mother",
    "mum",
    "nephew",
    "niece",
    "neighbor",
    "neighbors",
    "neighbour",
    "neighbours",
    "parents",
    "partner",
    "roommate",
    "roommates",
    "sister",
    "sisters",
    "son",
    "teammate",
    "teammates",
    "teacher",
    "uncle",
    "wife",
];

/// The same in Chinese, after "我", "我的" or "我家" at the start of a clause.
const RELATIONS_ZH: &[&str] = &[
    "爸爸",
    "爸",
    "妈妈",
    "妈",
    "父亲",
    "母亲",
    "父母",
    "哥哥",
    "弟弟",
    "姐姐",
    "妹妹",
    "表哥",
    "表弟",
    "表姐",
    "表妹",
    "堂哥",
    "堂弟",
    "堂姐",
    "堂妹",
    "老公",
    "老婆",
    "丈夫",
    "妻子",
    "儿子",
    "女儿",
    "孩子",
    "爷爷",
    "奶奶",
    "外公",
    "外婆",
    "叔叔",
    "阿姨",
    "舅舅",
    "姑姑",
    "邻居",
    "同事",
    "同学",
    "室友",
    "朋友",
    "老板",
    "领导",
    "男朋友",
    "女朋友",
    "队友",
    "经理",
    "老师",
    "闺女",
    "老妈",
    "老爸",
    "媳妇",
    "孙子",
    "孙女",
    "宝宝",
];

/// Whether `text` tells something about someone other than the user: its first clause opens with
/// one of the user's relations ("my sister …", "我邻居…"), and it does not also speak of the user
/// ("my wife and I moved …", "我和我妹妹…").
pub fn about_someone_else(text: &str) -> bool {
    let first = text.trim().split(['.', '!', ';', '。', '！', '；', '\n']).next().unwrap_or("");
    let english = match words(first).as_slice() {
        [owner, relation, rest @ ..]
            if (owner == "my" || owner == "our") && RELATIONS_EN.contains(&relation.as_str()) =>
        {
            !rest.iter().any(|w| w == "i" || w == "i'm" || w == "me")
        }
        _ => false,
    };
    let chinese = first
        .trim_start()
        .strip_prefix('我')
        .map(|rest| rest.strip_prefix('的').or_else(|| rest.strip_prefix('家')).unwrap_or(rest))
        .is_some_and(|rest| {
            RELATIONS_ZH.iter().any(|r| rest.starts_with(r))
                && !first.contains("和我")
                && !first.contains("跟我")
        });
    english || chinese
}

/// English words by which a sentence speaks of the user (or of a "we" the user is part of).
const FIRST_PERSON_EN: &[&str] =
    &["i", "i'm", "i've", "i'd", "i'll", "me", "my", "mine", "myself", "we", "we're", "we've", "us", "our"];

/// English words that open a sentence whose subject is a thing or an event, not a person:
/// existential "there", and a noun phrase led by an article or a demonstrative.
const THING_OPENINGS_EN: &[&str] =
    &["there", "there's", "the", "this", "that", "these", "those", "it", "it's", "a", "an"];

/// Pieces of content a user reports taking in; what they are "about" is their topic, not
/// something the user has.
const CONTENT_EN: &[&str] = &[
    "article",
    "articles",
    "talk",
    "talks",
    "video",
    "videos",
    "documentary",
    "podcast",
    "book",
    "show",
    "post",
    "story",
    "news",
    "programme",
    "program",
    "film",
    "movie",
    "lecture",
    "interview",
    "episode",
    "read",
    "watched",
    "saw",
    "heard",
    "listened",
];

/// The same in Chinese: pieces of content and taking them in.
const CONTENT_ZH: &[&str] =
    &["文章", "视频", "纪录片", "节目", "新闻", "报道", "播客", "讲座", "书", "看了", "读了", "听了"];

/// Chinese markers of the topic of a piece of content ("about", "introducing").
const TOPIC_ZH: &[&str] = &["关于", "介绍"];

/// Whether `text` only remarks on things or events: each of its clauses either has a thing or an
/// event for its subject and does not speak of the user ("There's a swimming event in the park
/// this Sunday.", "这周日公园里有攀岩活动。"), or reports a piece of content on a topic ("I read an
/// article about housing prices in Chengdu.", "我看了一个介绍Zed插件的视频。"). A message that also
/// states something of the user ("Long week. … I drive a Corolla.") is not one.
pub fn remarks_on_something(text: &str) -> bool {
    let sentences: Vec<&str> = text
        .split(['.', ',', '!', '?', ';', '。', '，', '！', '？', '；', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    !sentences.is_empty() && sentences.iter().all(|s| remark_sentence(s))
}

/// Whether one sentence is a remark (see [`remarks_on_something`]).
fn remark_sentence(sentence: &str) -> bool {
    let words = words(sentence);
    let first_person = |words: &[String]| words.iter().any(|w| FIRST_PERSON_EN.contains(&w.as_str()));
    // The topic after "about" must not speak of the user ("… before I bought my Civic").
    let about_content = |words: &[String]| {
        words.iter().position(|w| w == "about").is_some_and(|at| {
            words[..at].iter().any(|w| CONTENT_EN.contains(&w.as_str())) && !first_person(&words[at..])
        })
    };
    let english = match words.first() {
        Some(first) => {
            (THING_OPENINGS_EN.contains(&first.as_str()) && !first_person(&words)) || about_content(&words)
        }
        None => false,
    };
    let topic = TOPIC_ZH.iter().filter_map(|t| sentence.find(t)).min();
    let chinese_content = topic.is_some_and(|at| {
        CONTENT_ZH.iter().any(|c| sentence[..at].contains(c) || sentence[at..].contains(c))
    });
    // Existential: "<place or time>有…" ("there is …"), "到处都是…" ("… everywhere"), with no person.
    let existential = !sentence.contains('我')
        && !sentence.contains('咱')
        && (sentence.replace("没有", "").contains('有') || sentence.contains("到处"));
    english || chinese_content || existential
}

/// Whether a question asks about the user: it speaks of "I", "me" or "my" (or "我") and not of
/// one of the user's relations ("what does my sister do?", "我妹妹做什么工作？").
pub fn asks_about_the_user(question: &str) -> bool {
    let words = words(question);
    let english = words.iter().any(|w| matches!(w.as_str(), "i" | "me" | "my" | "i'm" | "mine"));
    // Split at apostrophes too, so that "my sister's car" names the sister.
    let lower = question.to_lowercase();
    let parts: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let mentions_relation =
        parts.windows(2).any(|w| (w[0] == "my" || w[0] == "our") && RELATIONS_EN.contains(&w[1]));
    let chinese = question.contains('我')
        && !RELATIONS_ZH
            .iter()
            .any(|r| ["我", "我的", "我家"].iter().any(|mine| question.contains(&format!("{mine}{r}"))));
    (english && !mentions_relation) || chinese
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_about_a_relation_are_someone_elses() {
        for text in [
            "My neighbour just bought a Corolla.",
            "My sister works as an accountant.",
            "Our kids love swimming.",
            "我邻居刚买了一辆卡罗拉。",
            "我的同事特别推崇Emacs。",
            "我妹妹是老师。",
            "我家闺女今年上小学了。",
        ] {
            assert!(about_someone_else(text), "{text}");
        }
    }

    #[test]
    fn sentences_about_the_user_are_the_users() {
        for text in [
            "I drive a Corolla.",
            "My car is a Corolla.",
            "My wife and I moved to Berlin.",
            "Quick update: my sister visited, and I moved to Berlin.",
            "我开的是卡罗拉。",
            "我和我妹妹一起搬到了成都。",
            "There's a swimming event in the park this Sunday.",
        ] {
            assert!(!about_someone_else(text), "{text}");
        }
    }

    #[test]
    fn remarks_on_things_are_nobodys() {
        for text in [
            "There's a swimming event in the park this Sunday.",
            "The iPhone 15 ad at the bus stop is everywhere.",
            "There was a documentary about chefs on TV last night.",
            "I read an article about housing prices in Chengdu.",
            "I watched a talk about Neovim plugins.",
            "这周日公园里有攀岩活动。",
            "公交站到处都是小米14的广告。",
            "昨晚电视上有个关于律师的纪录片。",
            "我看了一篇关于成都房价的文章。",
            "我看了一个介绍Zed插件的视频。",
        ] {
            assert!(remarks_on_something(text), "{text}");
        }
        for text in [
            "I drive a Corolla.",
            "Got a new car last weekend: a Civic.",
            "The car I drive is a Civic.",
            "Home for me is Berlin.",
            "Long week. The meetings ran late every day. I drive a Corolla. What a month, honestly.",
            "I read a lot about cars before I bought my Civic, and I love it.",
            "换车了，现在开的是Model 3。",
            "在上海的新家还没收拾完。",
            "新买的Pixel 8设置了一晚上。",
            "我有一辆思域。",
            "My neighbour just bought a Civic.",
        ] {
            assert!(!remarks_on_something(text), "{text}");
        }
    }

    #[test]
    fn questions_about_the_user_are_told_from_questions_about_others() {
        for q in ["What car do I drive now?", "Where do I live?", "我现在开什么车？", "我的职业是什么？"]
        {
            assert!(asks_about_the_user(q), "{q}");
        }
        for q in [
            "What does my sister do?",
            "Where does my brother live?",
            "我妹妹做什么工作？",
            "我家闺女在哪上学？",
            "Is Seattle rainy?",
        ] {
            assert!(!asks_about_the_user(q), "{q}");
        }
    }
}
