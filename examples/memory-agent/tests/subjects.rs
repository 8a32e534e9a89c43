//! The subject classifier ([`Subjects`]) on its own, with the multilingual encoder: statements,
//! updates that only imply the change, questions and chit-chat, in English and Chinese, each
//! labelled with the subject it is about (or none, for talk that sets no fact about the user).
//! None of them is from the changing-facts set.

use std::sync::Arc;

use memory_agent::{Passages, SameSubject, Subjects, SUBJECTS, SUBJECT_MARGIN};
use mnemograph_core::store::DynEmbeddings;

/// Sentences and the subject each is about; `None` for talk that sets no fact.
const LABELLED: &[(&str, Option<&str>)] = &[
    // Plain statements.
    ("I live in Lisbon.", Some("home")),
    ("我住在杭州。", Some("home")),
    ("I work as a dentist.", Some("job")),
    ("我是一名电工。", Some("job")),
    ("I drive a Mazda 3.", Some("vehicle")),
    ("我开的是一辆比亚迪。", Some("vehicle")),
    ("My phone is a Nokia.", Some("phone")),
    ("我的手机是OPPO。", Some("phone")),
    ("I write all my code in Vim.", Some("software")),
    ("我用Python写后端。", Some("software")),
    ("I play badminton twice a week.", Some("sport")),
    ("我每周去健身房三次。", Some("sport")),
    ("I have a cat named Mochi.", Some("pet")),
    ("我养了一条金毛。", Some("pet")),
    ("I'm vegetarian.", Some("diet")),
    ("我不吃辣。", Some("diet")),
    ("I'm allergic to penicillin.", Some("health")),
    ("I speak Portuguese and a little French.", Some("language")),
    ("我在学日语。", Some("language")),
    ("I studied chemistry at university.", Some("education")),
    ("My wife and I just got married.", Some("partner")),
    ("I work at a small bank downtown.", Some("job")),
    ("I take the subway to the office.", Some("vehicle")),
    ("I play the violin.", Some("music")),
    // Updates that only imply the change.
    ("We finally got the keys to our place in Madrid.", Some("home")),
    ("刚在深圳租好房子，下周搬进去。", Some("home")),
    ("My first shift at the hospital is on Monday.", Some("job")),
    ("入职第一天，同事们都很热情。", Some("job")),
    ("The dealership handed me the keys to a red Tesla today.", Some("vehicle")),
    ("新车提回来了，是辆蓝色的宝马。", Some("vehicle")),
    ("Transferring my contacts to the new Motorola was a pain.", Some("phone")),
    ("新手机的屏幕比之前的大多了。", Some("phone")),
    ("Been tweaking my Helix config all week.", Some("software")),
    ("Signed up for a boxing gym near my office.", Some("sport")),
    ("第一次上拳击课，累坏了。", Some("sport")),
    ("Our new puppy chewed through my shoes.", Some("pet")),
    ("Installed a bunch of new extensions in my IDE last night.", Some("software")),
    ("给终端和编辑器换了一套新主题，看着舒服多了。", Some("software")),
    ("I go swimming every Sunday afternoon.", Some("sport")),
    ("每周三晚上我都去踢球。", Some("sport")),
    // Questions about the user.
    ("Where am I living these days?", Some("home")),
    ("我现在住哪儿？", Some("home")),
    ("What's my occupation?", Some("job")),
    ("我是干什么的？", Some("job")),
    ("Which car am I driving?", Some("vehicle")),
    ("我开的是什么车？", Some("vehicle")),
    ("Which phone do I use?", Some("phone")),
    ("我用什么手机？", Some("phone")),
    ("Which editor do I program in?", Some("software")),
    ("我平时用什么写代码？", Some("software")),
    ("What exercise do I do?", Some("sport")),
    ("我最近在练什么运动？", Some("sport")),
    ("What is my pet's name?", Some("pet")),
    // Talk that sets no fact.
    ("What a long week, meetings every single day.", None),
    ("这周真累，天天加班。", None),
    ("The weather is lovely today.", None),
    ("今天天气真好。", None),
    ("Thanks, that's helpful!", None),
    ("谢谢你的建议。", None),
    ("Remind me to buy milk later.", None),
    ("记得提醒我明天交报告。", None),
    ("Hello there, good to see you!", None),
    ("嗨，好久不见。", None),
    ("I'm going to the cinema tonight.", None),
    ("晚上想去公园散散步。", None),
];

#[tokio::test]
async fn sentences_land_on_their_subject_in_both_languages() {
    let Some(dir) = std::env::var_os("USE_MODEL_DIR") else {
        eprintln!("SKIPPED: USE_MODEL_DIR is not set (bash scripts/models.sh use-multilingual)");
        return;
    };
    let model = mnemograph_memory::MultilingualUseEmbeddings::load(dir).expect("the model");
    let embed: Arc<dyn DynEmbeddings> = Arc::new(model);
    let subjects = Subjects::new(Arc::clone(&embed));
    let texts: Vec<String> = LABELLED.iter().map(|(t, _)| (*t).to_owned()).collect();
    let vectors = embed.embed_documents(&texts).await.expect("vectors");
    let (mut wrong, mut others, mut facts) = (Vec::new(), 0, 0);
    for ((text, label), v) in LABELLED.iter().zip(&vectors) {
        let placed = subjects.place(v).await.expect("placed");
        let on: Vec<&str> = (0..SUBJECTS.len())
            .filter(|k| SUBJECTS[*k].fact && placed.on(*k, SUBJECT_MARGIN))
            .map(|k| SUBJECTS[k].name)
            .collect();
        println!("{:<10} {:.3} {on:?} {text}", SUBJECTS[placed.nearest].name, placed.similarity);
        match label {
            // A statement or a question is on its subject, among few others.
            Some(subject) => {
                facts += 1;
                others += on.len().saturating_sub(1);
                if !on.contains(subject) {
                    wrong.push(format!("{text}: on {on:?}, not {subject}"));
                }
            }
            // Talk is nearest to no fact.
            None => {
                if placed.fact().is_some() {
                    wrong.push(format!("{text}: nearest {}", SUBJECTS[placed.nearest].name));
                }
            }
        }
    }
    println!(
        "{} of {} placed right, {others} other subjects for {facts} facts",
        LABELLED.len() - wrong.len(),
        LABELLED.len()
    );
    assert!(wrong.len() * 10 <= LABELLED.len(), "more than a tenth wrong:\n{}", wrong.join("\n"));
    assert!(others * 2 <= facts, "{others} other subjects for {facts} facts");
}

/// A stored exchange of user `u` saying `said` at second `at`.
fn record(id: i64, said: &str, at: i64) -> mnemograph_memory::MemoryRecord {
    let turn = mnemograph_memory::NewMemory::turn("u", "s", said, "Noted.");
    mnemograph_memory::MemoryRecord {
        id,
        user_id: turn.user_id,
        session_id: turn.session_id,
        role: turn.role,
        content: turn.content,
        created_at: at,
        importance: turn.importance,
        metadata: turn.metadata,
    }
}

#[tokio::test]
async fn the_rule_retires_an_older_statement_only_on_the_new_ones_subject() {
    use mnemograph_memory::{Candidate, RuleDecider, SupersedeDecider};
    let Some(dir) = std::env::var_os("USE_MODEL_DIR") else {
        assert!(std::env::var_os("CI").is_none(), "USE_MODEL_DIR is required when CI is set");
        eprintln!("SKIPPED: USE_MODEL_DIR is not set (bash scripts/models.sh use-multilingual)");
        return;
    };
    let model = mnemograph_memory::MultilingualUseEmbeddings::load(dir).expect("the model");
    let embed: Arc<dyn DynEmbeddings> = Arc::new(model);
    let on = Some((Passages::new(Arc::clone(&embed)), Subjects::new(Arc::clone(&embed))));
    // Every candidate is similar enough for the rule alone.
    let rule = RuleDecider::default().min_similarity(0.0);
    let new = record(9, "我不用VS Code了，现在写代码都用Neovim。", 10);
    let candidates = [
        Candidate::new(record(1, "I use VS Code for coding.", 1), 0.9),
        Candidate::new(record(2, "I switched banks last month.", 2), 0.9),
        Candidate::new(record(3, "I drive a Corolla.", 3), 0.9),
    ];
    let ids =
        |decided: Vec<mnemograph_memory::Supersession>| decided.into_iter().map(|d| d.id).collect::<Vec<_>>();
    assert_eq!(ids(rule.decide(&new, &candidates).await.unwrap()), [1, 2, 3], "the rule alone retires all");
    let same_subject = SameSubject::new(rule, on);
    assert_eq!(ids(same_subject.decide(&new, &candidates).await.unwrap()), [1]);
    // A new statement on no fact (talk) retires nothing.
    let talk = record(10, "What a long week, meetings every single day.", 11);
    assert!(same_subject.decide(&talk, &candidates).await.unwrap().is_empty());
}
