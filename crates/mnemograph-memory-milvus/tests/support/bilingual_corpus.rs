//! The text of the bilingual quality set: the kinds of personal facts (statement, change and
//! paraphrased question in English and Chinese, with their values) and the small talk around them.
//! [`super::bilingual_quality`] turns them into users, sessions and questions.

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
pub struct Kind {
    /// Statement templates (`{v}` is the value), English then Chinese.
    pub said: [&'static str; 2],
    /// How a user reports the change, English then Chinese; empty for facts that never change.
    pub change: [&'static str; 2],
    /// The paraphrased question, English then Chinese.
    pub asked: [&'static str; 2],
    /// Values, (English, Chinese).
    pub values: [(&'static str, &'static str); 6],
}

impl Kind {
    /// The statement of value `value` in `lang`.
    pub fn said(&self, lang: Lang, value: usize) -> String {
        fill(pick(self.said, lang), self.values[value], lang)
    }
    /// How the user reports the change to value `value`, in `lang`.
    pub fn changed(&self, lang: Lang, value: usize) -> String {
        fill(pick(self.change, lang), self.values[value], lang)
    }
    /// The question, in `lang`.
    pub fn asked(&self, lang: Lang) -> String {
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
pub const CHANGING: [Kind; 7] = [
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
pub const STABLE: [Kind; 7] = [
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
pub const FILLER: [&str; 26] = [
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
