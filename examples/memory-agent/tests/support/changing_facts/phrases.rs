//! The words of the changing-facts set: for each subject a user can state a fact about, its
//! values in both languages, how a first statement, an update, an update that only implies the
//! change, a lexical trap and a question are worded, in English and Chinese.
//!
//! In templates, `{v}` is the value stated, `{av}` the same with its English article, `{old}` the
//! value it replaces, and `{a}`/`{b}` values a trap names (the user's own among them).

/// One kind of fact a user can state and later change.
pub struct Subject {
    /// A short name, for reports.
    pub name: &'static str,
    /// The values, as (English, Chinese).
    pub values: &'static [(&'static str, &'static str)],
    /// First statements.
    pub state: Phrases,
    /// Updates that say what changed, worded unlike the first statement.
    pub update: Phrases,
    /// Updates that only imply the change.
    pub implied: Phrases,
    /// Questions and remarks that name values of the subject without stating the user's: about
    /// someone else, or about the thing itself.
    pub trap: Phrases,
    /// Questions about the user's current value.
    pub question: Phrases,
}

/// Templates in each language.
pub struct Phrases {
    /// English templates.
    pub en: &'static [&'static str],
    /// Chinese templates.
    pub zh: &'static [&'static str],
}

const fn p(en: &'static [&'static str], zh: &'static [&'static str]) -> Phrases {
    Phrases { en, zh }
}

/// Every subject of the set.
pub const SUBJECTS: [Subject; 6] = [
    Subject {
        name: "car",
        values: &[
            ("Corolla", "卡罗拉"),
            ("Model 3", "Model 3"),
            ("Civic", "思域"),
            ("Golf", "高尔夫"),
            ("Outback", "傲虎"),
            ("Prius", "普锐斯"),
        ],
        state: p(
            &["I drive {av}.", "My car is {av}.", "I commute to work every day in my {v}."],
            &["我开的是{v}。", "我的车是一辆{v}。", "我每天开{v}上班。"],
        ),
        update: p(
            &[
                "I traded in my {old}, so I drive {av} now.",
                "Got a new car last weekend: {av}.",
                "Not the {old} anymore; these days I drive {av}.",
            ],
            &["换车了，现在开的是{v}。", "我把{old}卖了，买了一辆{v}。", "我现在不开{old}了，改开{v}。"],
        ),
        implied: p(
            &["Just picked up my {v} from the dealer, it still has that new-car smell!"],
            &["刚从4S店把{v}提回来，新车的味道还在。"],
        ),
        trap: p(
            &[
                "Which is more reliable, {aa} or {ab}?",
                "How often does {aa} need an oil change?",
                "Is {aa} a good first car for a teenager?",
                "My neighbour just bought {aa}.",
                "My brother says {aa} is cheap to insure.",
            ],
            &[
                "{a}和{b}哪个更省油？",
                "{a}的保养贵不贵？",
                "{a}适合新手开吗？",
                "我邻居刚买了一辆{a}。",
                "我同事说{a}很好开。",
            ],
        ),
        question: p(
            &["What car do I drive now?", "Which car do I have these days?"],
            &["我现在开什么车？", "我的车是哪一款？"],
        ),
    },
    Subject {
        name: "city",
        values: &[
            ("Boston", "波士顿"),
            ("Seattle", "西雅图"),
            ("Shanghai", "上海"),
            ("Chengdu", "成都"),
            ("Berlin", "柏林"),
            ("Toronto", "多伦多"),
        ],
        state: p(
            &["I live in {v}.", "Home for me is {v}.", "I've been living in {v} for a few years."],
            &["我住在{v}。", "我家在{v}。", "我在{v}生活好几年了。"],
        ),
        update: p(
            &[
                "We moved to {v} last month.",
                "I relocated to {v} for a fresh start.",
                "I don't live in {old} anymore, I'm in {v} now.",
            ],
            &["搬家了，现在住在{v}。", "我从{old}搬到了{v}。", "上个月我们搬去了{v}。"],
        ),
        implied: p(&["Still unpacking boxes at our new flat in {v}."], &["在{v}的新家还没收拾完。"]),
        trap: p(
            &[
                "Is {a} rainy in winter?",
                "What should I see on a weekend trip to {a}?",
                "Is {a} more expensive than {b}?",
                "My cousin is flying to {a} next week.",
                "I read an article about housing prices in {a}.",
            ],
            &[
                "{a}冬天冷吗？",
                "去{a}旅游有什么推荐？",
                "{a}和{b}哪个房价更高？",
                "我表哥下周要去{a}出差。",
                "我看了一篇关于{a}房价的文章。",
            ],
        ),
        question: p(
            &["Where do I live now?", "Which city am I based in?"],
            &["我现在住在哪里？", "我现在在哪个城市生活？"],
        ),
    },
    Subject {
        name: "job",
        values: &[
            ("nurse", "护士"),
            ("teacher", "老师"),
            ("software engineer", "软件工程师"),
            ("accountant", "会计"),
            ("chef", "厨师"),
            ("lawyer", "律师"),
        ],
        state: p(&["I work as {av}.", "I'm {av} by profession."], &["我是一名{v}。", "我的工作是{v}。"]),
        update: p(
            &[
                "I changed careers and now work as {av}.",
                "I quit being {aold}; I'm {av} now.",
                "Started my new job as {av} this week.",
            ],
            &["我转行了，现在当{v}。", "我不做{old}了，现在是{v}。", "这周开始了新工作，当{v}。"],
        ),
        implied: p(
            &["First week at the new job went well, being {av} suits me."],
            &["新工作第一周挺顺利，当{v}挺适合我。"],
        ),
        trap: p(
            &[
                "Do {a}s earn more than {b}s?",
                "What skills does a good {a} need?",
                "My sister works as {aa}.",
                "There was a documentary about {a}s on TV last night.",
            ],
            &[
                "{a}和{b}哪个更累？",
                "当{a}需要什么证书？",
                "我妹妹是{a}。",
                "昨晚电视上有个关于{a}的纪录片。",
            ],
        ),
        question: p(
            &["What do I do for work?", "What is my job now?"],
            &["我现在做什么工作？", "我的职业是什么？"],
        ),
    },
    Subject {
        name: "editor",
        values: &[
            ("Neovim", "Neovim"),
            ("VS Code", "VS Code"),
            ("Emacs", "Emacs"),
            ("IntelliJ", "IntelliJ"),
            ("Sublime Text", "Sublime Text"),
            ("Zed", "Zed"),
        ],
        state: p(
            &["I use {v} for coding.", "All my code is written in {v}."],
            &["我写代码用{v}。", "我平时用{v}编程。"],
        ),
        update: p(
            &[
                "I switched from {old} to {v}.",
                "I've moved my whole setup over to {v}.",
                "No more {old} for me, {v} is my editor now.",
            ],
            &["我从{old}换到{v}了。", "现在写代码改用{v}了。", "我不用{old}了，换成了{v}。"],
        ),
        implied: p(
            &["Spent the weekend configuring {v} plugins, loving it so far."],
            &["周末一直在折腾{v}的插件，用着挺顺手。"],
        ),
        trap: p(
            &[
                "Which editor is best for beginners, {a} or {b}?",
                "Does {a} support remote development?",
                "My teammate swears by {a}.",
                "I watched a talk about {a} plugins.",
            ],
            &[
                "{a}和{b}哪个更适合新手？",
                "{a}的快捷键难学吗？",
                "我同事特别推崇{a}。",
                "我看了一个介绍{a}插件的视频。",
            ],
        ),
        question: p(
            &["Which editor do I code in?", "What do I use to write code now?"],
            &["我写代码用什么编辑器？", "我现在用哪个编辑器？"],
        ),
    },
    Subject {
        name: "phone",
        values: &[
            ("iPhone 15", "iPhone 15"),
            ("Pixel 8", "Pixel 8"),
            ("Galaxy S24", "Galaxy S24"),
            ("Xiaomi 14", "小米14"),
            ("Huawei Mate 60", "华为Mate 60"),
            ("OnePlus 12", "一加12"),
        ],
        state: p(
            &["My phone is {av}.", "I use {av} as my phone."],
            &["我用的手机是{v}。", "我的手机是{v}。"],
        ),
        update: p(
            &[
                "I upgraded my phone to {av}.",
                "Dropped my {old}, so I bought {av}.",
                "I switched phones, it's {av} now.",
            ],
            &["我换了手机，现在用{v}。", "{old}摔坏了，买了个{v}。", "我不用{old}了，换成{v}了。"],
        ),
        implied: p(&["Setting up my new {v} took all evening."], &["新买的{v}设置了一晚上。"]),
        trap: p(
            &[
                "Is the {a} camera better than the {b} camera?",
                "How long does {aa} battery last?",
                "My dad just got {aa}.",
                "The {a} ad at the bus stop is everywhere.",
            ],
            &["{a}和{b}哪个拍照更好？", "{a}的电池耐用吗？", "我爸刚买了{a}。", "公交站到处都是{a}的广告。"],
        ),
        question: p(
            &["What phone do I have?", "Which phone am I using now?"],
            &["我用的是什么手机？", "我现在的手机是哪款？"],
        ),
    },
    Subject {
        name: "sport",
        values: &[
            ("running", "跑步"),
            ("swimming", "游泳"),
            ("yoga", "瑜伽"),
            ("rock climbing", "攀岩"),
            ("tennis", "网球"),
            ("cycling", "骑行"),
        ],
        state: p(
            &["My main exercise is {v}.", "I keep fit with {v}."],
            &["我主要的运动是{v}。", "我平时靠{v}锻炼身体。"],
        ),
        update: p(
            &[
                "I gave up {old}; these days it's {v} for me.",
                "I switched my workouts to {v}.",
                "Not much {old} anymore, I've taken up {v}.",
            ],
            &["我的运动从{old}换成了{v}。", "最近开始{v}了，以前的{old}不练了。", "现在改练{v}了。"],
        ),
        implied: p(&["My whole body is sore after my first week of {v}."], &["练了一周{v}，浑身酸痛。"]),
        trap: p(
            &[
                "Is {a} good for back pain?",
                "Which burns more calories, {a} or {b}?",
                "My roommate is really into {a}.",
                "There's {aa} event in the park this Sunday.",
            ],
            &["{a}对膝盖好吗？", "{a}和{b}哪个更减肥？", "我室友特别喜欢{a}。", "这周日公园里有{a}活动。"],
        ),
        question: p(
            &["What sport do I do these days?", "How do I keep fit now?"],
            &["我现在做什么运动？", "我平时靠什么锻炼？"],
        ),
    },
];

/// Chit-chat that names none of the subjects' values.
pub const CHAT: Phrases = p(
    &[
        "Can you tell me a joke?",
        "What's a good recipe for a quick dinner?",
        "How do I make cold brew coffee?",
        "Any tips for sleeping better?",
        "What's the capital of Australia?",
        "Explain how a rainbow forms.",
        "Recommend a good science fiction novel.",
        "How many minutes should I boil an egg?",
        "What's the difference between weather and climate?",
        "Help me write a birthday message for a friend.",
        "Why is the sky blue?",
        "How do I keep basil alive indoors?",
        "What's a good stretch after sitting all day?",
        "Give me three ideas for a rainy afternoon.",
        "How do you say thank you in Japanese?",
        "What is compound interest?",
        "Suggest a name for a goldfish.",
        "How long should a power nap be?",
        "What's the tallest mountain in Europe?",
        "How do I get a coffee stain out of a shirt?",
        "What's a polite way to decline an invitation?",
        "How do bees make honey?",
        "Summarise the plot of Hamlet in two sentences.",
        "What should I pack for a beach holiday?",
        "How do I start journaling?",
    ],
    &[
        "给我讲个笑话吧。",
        "晚饭做什么简单又好吃？",
        "怎么才能睡得更好？",
        "帮我写一首关于秋天的短诗。",
        "彩虹是怎么形成的？",
        "推荐一本好看的科幻小说。",
        "煮鸡蛋要几分钟？",
        "为什么天空是蓝色的？",
        "怎么在家里养活罗勒？",
        "复利是什么意思？",
        "周末下雨可以做什么？",
        "日语的谢谢怎么说？",
        "久坐之后做什么拉伸好？",
        "怎么去掉衣服上的咖啡渍？",
        "午睡多久最合适？",
        "蜜蜂是怎么酿蜜的？",
        "怎么委婉地拒绝别人的邀请？",
        "去海边度假要带什么？",
        "怎么开始写日记？",
        "澳大利亚的首都是哪里？",
    ],
);

/// What comes before and after a fact given inside a longer message.
pub const AROUND: [Phrases; 2] = [
    p(
        &[
            "Long week. The meetings ran late every day and my sister visited on Wednesday.",
            "Quick update before I forget.",
            "So much happened lately, where do I even start.",
        ],
        &[
            "这周太忙了，天天开会到很晚，周三我姐还来看我。",
            "趁我还记得，先说一下近况。",
            "最近发生了好多事，不知道从哪说起。",
        ],
    ),
    p(
        &[
            "Anyway, I finally finished that report, so tonight I'm just going to relax.",
            "Also, remind me to call my mom this weekend.",
            "What a month, honestly.",
        ],
        &[
            "总之报告终于写完了，今晚想好好休息一下。",
            "对了，周末记得提醒我给妈妈打电话。",
            "说真的，这个月太折腾了。",
        ],
    ),
];
