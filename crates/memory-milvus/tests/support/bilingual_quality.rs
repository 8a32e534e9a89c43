//! A bilingual memory-quality set, generated deterministically, stored the way the `memory-agent`
//! main command stores a conversation offline (examples/memory-agent/src/nodes.rs and
//! importance.rs): one memory per exchange, `User: …\nAssistant: …`, importance 0.7 for a
//! statement and 0.2 for a question, the offline model's replies ("Noted, I will remember that."
//! to every statement).
//!
//! Per asking user (40 by default): four sessions of different ages (120, 60, 21 and 3 days old),
//! six small-talk exchanges in each (Chinese and English, questions and statements, some touching
//! the same topics as the facts), and six personal facts, each asked back once by a paraphrased
//! question that shares few words with it:
//! - every user mixes the languages: fact `j` of user `u` is Chinese when `u + j` is even;
//! - about one question in five is **cross-lingual** (asked in the other language than its fact);
//! - one or two facts per user (60 of 240 in all) **change**: an older version in session 0 or 1,
//!   a newer one in session 2 or 3; only the newer one answers the question, and about one change
//!   in five is said in the other language than the old version;
//! - every fourth user has a **decoy**, `<user>-twin` (the user's id is a prefix of it), who states
//!   the same kinds of facts about themself, with other values, in the language the user's
//!   questions are asked in, and every other user holds the same kinds of facts too: a memory of
//!   another user in a result is a cross-user hit, and there are near-perfect matches to leak.
//!
//! Each question is asked in a new session ("today", excluded from retrieval as the main command
//! excludes the current one) right after a greeting, which the main command's enriched query
//! puts before the question.

use memory_milvus::NewMemory;

/// The reference time: questions are asked now; sessions are dated back from it.
pub const NOW: i64 = 1_790_000_000;
/// Seconds in a day.
const DAY: i64 = 86_400;
/// Age in days of each stored session, oldest first.
pub const SESSION_AGES: [i64; 4] = [120, 60, 21, 3];
/// The session the questions are asked in (never stored).
pub const TODAY: &str = "today";
/// Small-talk exchanges per stored session.
const FILLER_PER_SESSION: usize = 6;
/// Facts per asking user, each asked back once.
const FACTS_PER_USER: usize = 6;

/// The offline model's reply to a statement (examples/memory-agent/src/offline.rs).
pub const STATEMENT_REPLY: &str = "Noted, I will remember that.";
/// The offline model's reply to a question it finds no fact for.
pub const UNKNOWN_REPLY: &str = "I don't remember you telling me anything about that.";
/// The main command's offline importance of a statement (importance.rs `importance`).
pub const STATEMENT_IMPORTANCE: f32 = 0.7;
/// The main command's importance of a question.
pub const QUESTION_IMPORTANCE: f32 = 0.2;
/// The least importance the main command recalls (importance.rs `MIN_RECALL_IMPORTANCE`).
pub const MIN_RECALL_IMPORTANCE: f32 = 0.3;

/// A language of the set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    /// Chinese.
    Zh,
    /// English.
    En,
}

impl Lang {
    /// The other language.
    pub fn other(self) -> Lang {
        match self {
            Lang::Zh => Lang::En,
            Lang::En => Lang::Zh,
        }
    }
}

/// A kind of personal fact: the statement and question in both languages, and six values (English,
/// Chinese). Kinds with a `change` template are the ones whose value changes.
struct Kind {
    /// Statement templates (`{v}` is the value), English then Chinese.
    said: [&'static str; 2],
    /// How a user reports the change, English then Chinese; empty for facts that never change.
    change: [&'static str; 2],
    /// The paraphrased question, English then Chinese.
    asked: [&'static str; 2],
    /// Values, (English, Chinese).
    values: [(&'static str, &'static str); 6],
}

impl Kind {
    fn said(&self, lang: Lang, value: usize) -> String {
        fill(pick(self.said, lang), self.values[value], lang)
    }
    fn changed(&self, lang: Lang, value: usize) -> String {
        fill(pick(self.change, lang), self.values[value], lang)
    }
    fn asked(&self, lang: Lang) -> String {
        pick(self.asked, lang).to_owned()
    }
}

fn pick(pair: [&str; 2], lang: Lang) -> &str {
    match lang {
        Lang::En => pair[0],
        Lang::Zh => pair[1],
    }
}

fn fill(template: &str, value: (&str, &str), lang: Lang) -> String {
    template.replace("{v}", pick([value.0, value.1], lang))
}

/// Facts that change: where one lives and works, the phone number, the car, the usual coffee, the
/// standup time, the race one trains for.
const CHANGING: [Kind; 7] = [
    Kind {
        said: ["I live in {v}, in a small flat near the metro.", "我住在{v}，家离地铁站很近。"],
        change: ["We just moved to {v}, so that is where I live now.", "我们刚搬到{v}，现在住在那边了。"],
        asked: ["Which city is home for me these days?", "我如今的家安在哪座城市？"],
        values: [
            ("Beijing", "北京"),
            ("Shanghai", "上海"),
            ("Shenzhen", "深圳"),
            ("Hangzhou", "杭州"),
            ("Chengdu", "成都"),
            ("Nanjing", "南京"),
        ],
    },
    Kind {
        said: ["I work at {v} as a backend engineer.", "我在{v}做后端工程师。"],
        change: ["I switched jobs, I am a backend engineer at {v} now.", "我跳槽了，现在在{v}做后端开发。"],
        asked: ["Which company employs me?", "我目前在哪家公司上班？"],
        values: [
            ("Tencent", "腾讯"),
            ("Alibaba", "阿里巴巴"),
            ("ByteDance", "字节跳动"),
            ("Huawei", "华为"),
            ("Baidu", "百度"),
            ("Xiaomi", "小米"),
        ],
    },
    Kind {
        said: ["My phone number is {v}.", "我的手机号是{v}。"],
        change: ["I got a new SIM card, my number is {v} now.", "我换了新的手机卡，号码改成{v}了。"],
        asked: ["Which number should people dial to reach me?", "别人打电话找我该拨哪个号？"],
        values: [
            ("138-0013-4521", "138-0013-4521"),
            ("139-2277-0846", "139-2277-0846"),
            ("186-5530-9172", "186-5530-9172"),
            ("135-8841-2063", "135-8841-2063"),
            ("177-0392-6615", "177-0392-6615"),
            ("150-6618-3374", "150-6618-3374"),
        ],
    },
    Kind {
        said: ["I drive a {v}.", "我开的是一辆{v}。"],
        change: ["I sold my old car and now drive a {v}.", "我把旧车卖了，现在开一辆{v}。"],
        asked: ["What vehicle do I own at the moment?", "我目前的座驾是哪款？"],
        values: [
            ("white Tesla Model 3", "白色的特斯拉Model 3"),
            ("blue BYD Han", "蓝色的比亚迪汉"),
            ("red Volkswagen Golf", "红色的大众高尔夫"),
            ("grey Toyota Corolla", "灰色的丰田卡罗拉"),
            ("black Honda Accord", "黑色的本田雅阁"),
            ("silver Nio ES6", "银色的蔚来ES6"),
        ],
    },
    Kind {
        said: ["My usual coffee order is a {v}.", "我平时点咖啡都要{v}。"],
        change: ["These days my usual coffee order is a {v} instead.", "我最近点咖啡改成{v}了。"],
        asked: ["What do I normally get at the café?", "去咖啡馆我一般喝哪种？"],
        values: [
            ("flat white", "馥芮白"),
            ("latte", "拿铁"),
            ("americano", "美式"),
            ("cappuccino", "卡布奇诺"),
            ("mocha", "摩卡"),
            ("cold brew", "冷萃"),
        ],
    },
    Kind {
        said: ["Our team standup is at {v} every morning.", "我们组每天早上{v}开站会。"],
        change: ["Our standup moved, it is at {v} every morning now.", "站会时间调整了，以后每天早上{v}开。"],
        asked: ["When does my team's daily sync start?", "我们组的晨会几点开始？"],
        values: [
            ("9:30", "九点半"),
            ("10:00", "十点"),
            ("9:00", "九点"),
            ("10:30", "十点半"),
            ("8:45", "八点四十五"),
            ("11:00", "十一点"),
        ],
    },
    Kind {
        said: ["I am training for a {v}.", "我正在为{v}做训练。"],
        change: ["I changed my goal, I am training for a {v} now.", "我换了目标，现在开始为{v}训练。"],
        asked: ["What event am I preparing for?", "我最近在备战哪个比赛？"],
        values: [
            ("half marathon", "半程马拉松"),
            ("full marathon", "全程马拉松"),
            ("10k race", "十公里赛跑"),
            ("triathlon", "铁人三项"),
            ("cycling race", "自行车赛"),
            ("trail run", "越野跑"),
        ],
    },
];

/// Facts that stay: the pet, an allergy, a daughter's name, the weekend sport, mother's birthday,
/// the language being learned, the favourite film.
const STABLE: [Kind; 7] = [
    Kind {
        said: ["We adopted a {v} from the shelter last spring.", "我们去年春天从救助站领养了一只{v}。"],
        change: ["", ""],
        asked: ["What kind of animal lives with us?", "我家养的是哪种动物？"],
        values: [
            ("corgi", "柯基"),
            ("tabby cat", "虎斑猫"),
            ("golden retriever", "金毛"),
            ("parrot", "鹦鹉"),
            ("rabbit", "兔子"),
            ("husky", "哈士奇"),
        ],
    },
    Kind {
        said: ["I am allergic to {v}, it gives me a rash.", "我对{v}过敏，吃了会起疹子。"],
        change: ["", ""],
        asked: ["Is there any food that makes me ill?", "哪些东西我吃了身体会不舒服？"],
        values: [
            ("peanuts", "花生"),
            ("shrimp", "虾"),
            ("milk", "牛奶"),
            ("mango", "芒果"),
            ("eggs", "鸡蛋"),
            ("sesame", "芝麻"),
        ],
    },
    Kind {
        said: ["Our daughter {v} just started first grade.", "我女儿{v}今年刚上一年级。"],
        change: ["", ""],
        asked: ["What name did we give our little girl?", "我家闺女叫啥名字？"],
        values: [
            ("Lily", "莉莉"),
            ("Mia", "米娅"),
            ("Emma", "艾玛"),
            ("Yoyo", "悠悠"),
            ("Coco", "可可"),
            ("Nana", "娜娜"),
        ],
    },
    Kind {
        said: ["I play {v} with friends every Saturday morning.", "我每周六早上和朋友打{v}。"],
        change: ["", ""],
        asked: ["How do I keep fit at the weekend?", "周末我一般做哪项运动？"],
        values: [
            ("badminton", "羽毛球"),
            ("table tennis", "乒乓球"),
            ("basketball", "篮球"),
            ("tennis", "网球"),
            ("volleyball", "排球"),
            ("squash", "壁球"),
        ],
    },
    Kind {
        said: ["My mother's birthday is on {v}.", "我妈妈的生日是{v}。"],
        change: ["", ""],
        asked: ["When is mum's big day?", "老妈哪天过生日？"],
        values: [
            ("March 3", "3月3日"),
            ("July 19", "7月19日"),
            ("May 30", "5月30日"),
            ("October 8", "10月8日"),
            ("January 21", "1月21日"),
            ("August 15", "8月15日"),
        ],
    },
    Kind {
        said: ["I am learning {v} with an online tutor twice a week.", "我在跟网上的老师学{v}，每周两次。"],
        change: ["", ""],
        asked: ["Which foreign language am I studying?", "我最近在进修哪门外语？"],
        values: [
            ("Japanese", "日语"),
            ("Spanish", "西班牙语"),
            ("French", "法语"),
            ("German", "德语"),
            ("Korean", "韩语"),
            ("Italian", "意大利语"),
        ],
    },
    Kind {
        said: [
            "My favourite film is {v}, I have seen it five times.",
            "我最喜欢的电影是《{v}》，已经看了五遍。",
        ],
        change: ["", ""],
        asked: ["Which movie could I watch again and again?", "哪部片子我百看不厌？"],
        values: [
            ("Spirited Away", "千与千寻"),
            ("Farewell My Concubine", "霸王别姬"),
            ("Inception", "盗梦空间"),
            ("Titanic", "泰坦尼克号"),
            ("Interstellar", "星际穿越"),
            ("Forrest Gump", "阿甘正传"),
        ],
    },
];

/// Small talk in both languages, questions and statements; some touch the facts' topics (a city,
/// coffee, a film, a phone, running), as real chatter does.
const FILLER: [&str; 26] = [
    "今天晚饭做点什么好？",
    "上海这周末会下雨吗？",
    "现在几点了？",
    "推荐一部适合周末看的电影？",
    "附近有好喝的咖啡店吗？",
    "帮我想一个周会的开场白好吗？",
    "今天天气真不错，适合出去走走。",
    "我今天有点累，想早点睡。",
    "昨天和同事在公司楼下喝了一杯拿铁。",
    "这周工作特别忙，会议一个接一个。",
    "我周末想去看场电影放松一下。",
    "刚才路上堵车堵了半个小时。",
    "我最近在读一本关于历史的书。",
    "What should I cook for dinner tonight?",
    "Can you suggest a good book for the train?",
    "Is it going to rain in Beijing this weekend?",
    "How do I write a polite email to my boss?",
    "Which phone plan is cheapest these days?",
    "What is a good stretch after running?",
    "The weather is lovely today, perfect for a walk.",
    "I feel a bit tired this morning.",
    "I had lunch with an old friend from school today.",
    "Traffic was terrible on the way home.",
    "I finally cleaned the kitchen this weekend.",
    "My colleague brought donuts to the office.",
    "I watched a documentary about whales last night.",
];

/// English words that open a question (examples/memory-agent/src/offline.rs `QUESTION_WORDS`).
const QUESTION_WORDS: [&str; 22] = [
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "do", "does", "did", "is", "are",
    "am", "can", "could", "should", "would", "will", "have", "has",
];

/// Whether the main command takes `text` for a question (examples/memory-agent/src/offline.rs
/// `is_question`): questions are saved with importance 0.2 and never consolidated.
pub fn is_question(text: &str) -> bool {
    let t = text.trim();
    if t.ends_with('?') || t.ends_with('？') || t.ends_with('吗') || t.contains("什么") {
        return true;
    }
    let first = t.split_whitespace().next().unwrap_or("").to_lowercase();
    let first = first.split('\'').next().unwrap_or("");
    QUESTION_WORDS.contains(&first)
}

/// One stored exchange.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// Whose.
    pub user: String,
    /// Index into [`SESSION_AGES`].
    pub session: usize,
    /// What the user said.
    pub said: String,
    /// When.
    pub at: i64,
}

impl Exchange {
    /// Whether the main command consolidates it (a statement, not a question).
    pub fn statement(&self) -> bool {
        !is_question(&self.said)
    }

    /// The session id.
    pub fn session_id(&self) -> String {
        session_id(self.session)
    }

    /// The memory the main command's `save_memory` writes for it.
    pub fn memory(&self) -> NewMemory {
        let (reply, importance) = if self.statement() {
            (STATEMENT_REPLY, STATEMENT_IMPORTANCE)
        } else {
            (UNKNOWN_REPLY, QUESTION_IMPORTANCE)
        };
        NewMemory::turn(&self.user, self.session_id(), &self.said, reply)
            .importance(importance)
            .created_at(self.at)
    }

    /// The stored content (what retrieval returns).
    pub fn content(&self) -> String {
        content(&self.said)
    }
}

/// The content the main command stores for the user saying `said`.
pub fn content(said: &str) -> String {
    let reply = if is_question(said) { UNKNOWN_REPLY } else { STATEMENT_REPLY };
    format!("User: {said}\nAssistant: {reply}")
}

/// Session id of stored session `s`.
pub fn session_id(s: usize) -> String {
    format!("s{s}")
}

/// A question and how its answer is recognised.
#[derive(Debug, Clone)]
pub struct Question {
    /// Who asks; only this user's memories may come back.
    pub user: String,
    /// The question.
    pub text: String,
    /// The conversation before it in today's session (the greeting and the reply).
    pub recent: Vec<String>,
    /// Its language.
    pub lang: Lang,
    /// The language of the memory that answers it.
    pub fact_lang: Lang,
    /// The content of the memory that answers it.
    pub expected: String,
    /// For a changed fact: the content of the outdated version.
    pub stale: Option<String>,
    /// For a changed fact: whether the change was said in the other language than the old version.
    pub change_switched_language: bool,
    /// When the user has a decoy: the decoy's id and its memory stating the same kind of fact (what
    /// a leak across users would most likely return).
    pub decoy: Option<(String, String)>,
}

impl Question {
    /// Asked in the other language than its answer.
    pub fn cross_lingual(&self) -> bool {
        self.lang != self.fact_lang
    }
    /// About a fact that changed.
    pub fn changed(&self) -> bool {
        self.stale.is_some()
    }
}

/// The whole set.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Which history is stored and how questions are asked: [`AS_THE_MAIN_COMMAND`], or a
    /// variant made by [`Dataset::statements_only`] or [`Dataset::bare_questions`].
    pub variant: &'static str,
    /// Every exchange of every user (asking users and decoys), in time order per user.
    pub exchanges: Vec<Exchange>,
    /// Every question.
    pub questions: Vec<Question>,
    /// The asking users.
    pub users: Vec<String>,
    /// The decoy users (who are never asked anything).
    pub decoys: Vec<String>,
}

/// The main command's way: every exchange stored, the question enriched with the conversation.
pub const AS_THE_MAIN_COMMAND: &str = "every exchange, enriched query";

impl Dataset {
    /// The same set with the question exchanges left out of the history (only statements
    /// stored): what retrieval would do if asking were not remembered.
    pub fn statements_only(&self) -> Dataset {
        let exchanges = self.exchanges.iter().filter(|e| e.statement()).cloned().collect();
        let variant = match self.variant {
            AS_THE_MAIN_COMMAND => "statements only, enriched query",
            _ => "statements only, bare question",
        };
        Dataset { variant, exchanges, ..self.clone() }
    }

    /// The same set with each question asked alone, not enriched with the greeting before it.
    pub fn bare_questions(&self) -> Dataset {
        let questions = self.questions.iter().map(|q| Question { recent: Vec::new(), ..q.clone() }).collect();
        let variant = match self.variant {
            AS_THE_MAIN_COMMAND => "every exchange, bare question",
            _ => "statements only, bare question",
        };
        Dataset { variant, questions, ..self.clone() }
    }

    /// Every user, asking ones and decoys.
    pub fn all_users(&self) -> impl Iterator<Item = &String> {
        self.users.iter().chain(&self.decoys)
    }
    /// The exchanges of `user`, oldest first.
    pub fn exchanges_of<'a>(&'a self, user: &'a str) -> impl Iterator<Item = &'a Exchange> + 'a {
        self.exchanges.iter().filter(move |e| e.user == user)
    }
    /// How many questions are about a changed fact.
    pub fn changed(&self) -> usize {
        self.questions.iter().filter(|q| q.changed()).count()
    }
    /// A one-line description.
    pub fn describe(&self) -> String {
        let q = &self.questions;
        format!(
            "{}: {} users + {} decoys, {} memories, {} questions ({} Chinese, {} cross-lingual, {} about changed \
             facts of which {} changed language)",
            self.variant,
            self.users.len(),
            self.decoys.len(),
            self.exchanges.len(),
            q.len(),
            q.iter().filter(|q| q.lang == Lang::Zh).count(),
            q.iter().filter(|q| q.cross_lingual()).count(),
            self.changed(),
            q.iter().filter(|q| q.change_switched_language).count(),
        )
    }
}

/// The opening of today's session in `lang`, as the main command's enriched query sees it: the
/// greeting and the offline model's reply to it (a greeting is not a question).
fn greeting(lang: Lang) -> Vec<String> {
    let hello = match lang {
        Lang::Zh => "你好，我又来了。",
        Lang::En => "Hi, it's me again.",
    };
    vec![hello.to_owned(), STATEMENT_REPLY.to_owned()]
}

/// Creation time of the `slot`-th exchange of session `s`: sessions are days apart, exchanges
/// within a session three minutes apart.
fn at(s: usize, slot: usize) -> i64 {
    NOW - SESSION_AGES[s] * DAY + slot as i64 * 180
}

/// Asking user `u`'s id.
pub fn user_id(u: usize) -> String {
    format!("bq-user-{u:02}")
}

/// Builds the set for `n_users` asking users (40 in the benchmark).
pub fn build(n_users: usize) -> Dataset {
    let mut data = Dataset {
        variant: AS_THE_MAIN_COMMAND,
        exchanges: Vec::new(),
        questions: Vec::new(),
        users: Vec::new(),
        decoys: Vec::new(),
    };
    for u in 0..n_users {
        let user = user_id(u);
        let mut mine: Vec<Exchange> = Vec::new();
        for s in 0..SESSION_AGES.len() {
            for t in 0..FILLER_PER_SESSION {
                let said = FILLER[(u * 7 + s * 5 + t * 3) % FILLER.len()];
                mine.push(Exchange { user: user.clone(), session: s, said: said.to_owned(), at: at(s, t) });
            }
        }
        // Planted facts follow the small talk in their session, so no two share a time.
        let mut next = [FILLER_PER_SESSION; 4];
        let mut push = |mine: &mut Vec<Exchange>, s: usize, said: String| {
            mine.push(Exchange { user: user.clone(), session: s, said, at: at(s, next[s]) });
            next[s] += 1;
        };
        // The decoy's statements: the same kinds, other values, in the language the user asks.
        let twin = (u % 4 == 0).then(|| format!("{user}-twin"));
        let mut decoy: Vec<(usize, String)> = Vec::new();
        let changes = 1 + u % 2;
        for j in 0..FACTS_PER_USER {
            let lang = if (u + j) % 2 == 0 { Lang::Zh } else { Lang::En };
            let asked_lang = if (u + 2 * j) % 5 == 1 { lang.other() } else { lang };
            let question = Question {
                user: user.clone(),
                text: String::new(),
                recent: greeting(asked_lang),
                lang: asked_lang,
                fact_lang: lang,
                expected: String::new(),
                stale: None,
                change_switched_language: false,
                decoy: None,
            };
            let question = if j < changes {
                let kind = &CHANGING[(u + 3 * j) % CHANGING.len()];
                let old_value = (u + j) % 6;
                let new_value = (old_value + 3) % 6;
                let switched = (u + j) % 5 == 2;
                let new_lang = if switched { lang.other() } else { lang };
                let old = kind.said(lang, old_value);
                let new = kind.changed(new_lang, new_value);
                let (old_session, new_session) = (j % 2, 2 + (u + j) % 2);
                push(&mut mine, old_session, old.clone());
                push(&mut mine, new_session, new.clone());
                decoy.push((new_session, kind.said(asked_lang, (new_value + 1) % 6)));
                Question {
                    text: kind.asked(asked_lang),
                    fact_lang: new_lang,
                    expected: content(&new),
                    stale: Some(content(&old)),
                    change_switched_language: switched,
                    ..question
                }
            } else {
                let kind = &STABLE[(2 * u + j) % STABLE.len()];
                let value = (u + j) % 6;
                let said = kind.said(lang, value);
                let s = (u + j) % 4;
                push(&mut mine, s, said.clone());
                decoy.push((s, kind.said(asked_lang, (value + 1) % 6)));
                Question { text: kind.asked(asked_lang), expected: content(&said), ..question }
            };
            let said = &decoy.last().expect("one decoy statement per fact").1;
            let decoy_memory = twin.as_ref().map(|t| (t.clone(), content(said)));
            data.questions.push(Question { decoy: decoy_memory, ..question });
        }
        mine.sort_by_key(|e| e.at);
        data.exchanges.extend(mine);
        data.users.push(user.clone());
        if let Some(twin) = twin {
            let mut theirs: Vec<Exchange> = Vec::new();
            for (i, (s, said)) in decoy.into_iter().enumerate() {
                theirs.push(Exchange { user: twin.clone(), session: s, said, at: at(s, 2 * i) });
                let small_talk = FILLER[(u * 3 + i * 5) % FILLER.len()];
                theirs.push(Exchange {
                    user: twin.clone(),
                    session: s,
                    said: small_talk.into(),
                    at: at(s, 2 * i + 1),
                });
            }
            theirs.sort_by_key(|e| e.at);
            data.exchanges.extend(theirs);
            data.decoys.push(twin);
        }
    }
    data
}
