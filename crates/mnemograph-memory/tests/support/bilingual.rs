//! A bilingual keyword-recall set: 30 facts of one user, half Chinese and half English, each with
//! a question that paraphrases it and shares only some of its words. Keyword search (BM25 alone)
//! must put the fact among the top 3 for its question; Chinese has no spaces, so the analyzer
//! decides whether a question's words can match at all.

/// `(fact, question)`; the first [`CHINESE`] are Chinese.
pub const CASES: [(&str, &str); 30] = [
    ("我对花生过敏，吃了会起疹子。", "我有什么食物过敏吗？"),
    ("我女儿叫小雨，今年上小学三年级。", "小雨现在读几年级了？"),
    ("我们的推荐系统用 Milvus 做向量检索，索引是 HNSW。", "推荐系统的向量索引用的是哪种？"),
    ("我每天早上喝一杯黑咖啡，不加糖也不加奶。", "我早上习惯喝什么咖啡？"),
    ("下个月十五号我要去上海出差，酒店订在浦东。", "去上海出差住在哪里？"),
    ("我的车是白色的特斯拉，去年三月买的。", "我开的车是什么颜色？"),
    ("我们团队每周三下午开周会，讨论项目进度。", "团队周会一般哪天开？"),
    ("我在学钢琴，老师每周六上午来家里上课。", "钢琴课安排在星期几？"),
    ("我最喜欢的电影是《霸王别姬》，已经看过五遍。", "我最喜欢哪部电影？"),
    ("我妈妈的生日是农历八月十五，正好是中秋节。", "妈妈的生日是哪一天？"),
    ("公司报销要先在系统里提交发票，再由部门经理审批。", "报销发票需要谁来审批？"),
    ("我今年的跑步目标是年底前跑完一次全程马拉松。", "我定的跑步目标是什么？"),
    ("生产数据库每天凌晨两点自动备份到对象存储。", "数据库什么时候做备份？"),
    ("我不吃香菜，点外卖的时候记得备注。", "点外卖有什么要注意的？"),
    ("我们把模型的上下文窗口从 8k 扩展到了 32k。", "现在模型的上下文窗口有多大？"),
    ("I am allergic to shellfish, especially shrimp.", "Which seafood am I allergic to?"),
    ("My son Leo plays soccer every Saturday morning.", "When does Leo have soccer practice?"),
    (
        "Our search service runs on Kubernetes with three replicas.",
        "How many replicas does the search service have?",
    ),
    ("I prefer green tea in the afternoon instead of coffee.", "What do I like to drink in the afternoon?"),
    (
        "The quarterly report is due on the last Friday of March.",
        "When do we have to hand in the quarterly report?",
    ),
    ("My laptop is a ThinkPad X1 Carbon with 32 GB of memory.", "How much memory does my laptop have?"),
    ("We migrated the billing database from MySQL to PostgreSQL.", "Which database does billing run on now?"),
    ("I am learning Spanish with an online tutor twice a week.", "How often do I meet my Spanish tutor?"),
    ("My favourite book is One Hundred Years of Solitude.", "What is the book I like best?"),
    (
        "The office wifi password changes on the first Monday of each month.",
        "When does the wifi password change?",
    ),
    ("I usually go hiking in the mountains near Boulder.", "Where do I like to go hiking?"),
    ("Our team deploys to production only on Tuesdays and Thursdays.", "On which days can the team deploy?"),
    ("My dentist appointment is at 3 pm next Wednesday.", "What time is my dentist appointment?"),
    ("The cache layer uses Redis with a ten minute expiry.", "How long do entries live in the Redis cache?"),
    ("I want to save enough money to buy a house within five years.", "What am I saving money for?"),
];

/// How many of [`CASES`], from the start, are Chinese.
pub const CHINESE: usize = 15;

/// Recall@3 split by language: how many questions found their fact in the top 3.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recall {
    /// Hits among the Chinese questions (out of [`CHINESE`]).
    pub chinese: usize,
    /// Hits among the English questions (out of `CASES.len() - CHINESE`).
    pub english: usize,
}

impl Recall {
    /// Counts a hit for case `i`.
    pub fn add(&mut self, i: usize) {
        if i < CHINESE {
            self.chinese += 1;
        } else {
            self.english += 1;
        }
    }
}

/// Recall@3 of a keyword ranker: `top3(question)` gives the indices into [`CASES`] of the facts
/// it ranks highest (at most 3 are looked at).
pub fn recall_at_3(mut top3: impl FnMut(&str) -> Vec<usize>) -> Recall {
    let mut recall = Recall::default();
    for (i, (_, question)) in CASES.iter().enumerate() {
        if top3(question).iter().take(3).any(|&hit| hit == i) {
            recall.add(i);
        }
    }
    recall
}
