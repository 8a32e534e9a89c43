//! Which of the user's people a sentence names, whatever word it uses for them, in English or
//! Chinese: "mum", "my mother" and "老妈" name one person, "闺女" and "our daughter" another.
//!
//! A question about one of the user's people ("When is mum's big day?", "我家闺女叫啥名字？") is
//! answered by what the user said about that person. Recall alone ranks by likeness, and a
//! statement about another relative is worded much like it ("My mother's birthday is …" and "Our
//! daughter … just started first grade" share the family words), so the statements naming the
//! asked person come first ([`names`]).

/// One kind of person in the user's life: the English words and the Chinese words for them.
struct Relation {
    /// English words, lower case.
    en: &'static [&'static str],
    /// Chinese words.
    zh: &'static [&'static str],
}

const fn relation(en: &'static [&'static str], zh: &'static [&'static str]) -> Relation {
    Relation { en, zh }
}

/// The kinds of people a user talks about, each with its words in both languages.
const RELATIONS: &[Relation] = &[
    relation(&["mum", "mom", "mother", "mummy", "mommy", "mama"], &["妈妈", "老妈", "母亲", "妈"]),
    relation(&["dad", "father", "daddy", "papa"], &["爸爸", "老爸", "父亲", "爸"]),
    relation(&["parents"], &["父母", "爸妈"]),
    relation(&["daughter", "daughters", "girl"], &["女儿", "闺女"]),
    relation(&["son", "sons", "boy"], &["儿子"]),
    relation(&["child", "children", "kid", "kids", "baby"], &["孩子", "宝宝"]),
    relation(&["wife"], &["老婆", "妻子", "媳妇", "太太"]),
    relation(&["husband"], &["老公", "丈夫"]),
    relation(&["boyfriend"], &["男朋友"]),
    relation(&["girlfriend"], &["女朋友"]),
    relation(&["partner"], &["伴侣"]),
    relation(&["brother", "brothers"], &["哥哥", "弟弟"]),
    relation(&["sister", "sisters"], &["姐姐", "妹妹"]),
    relation(&["grandma", "grandmother", "granny"], &["奶奶", "外婆", "姥姥"]),
    relation(&["grandpa", "grandfather"], &["爷爷", "外公", "姥爷"]),
    relation(&["grandson", "granddaughter", "grandchildren"], &["孙子", "孙女"]),
    relation(&["aunt"], &["阿姨", "姑姑", "姨妈"]),
    relation(&["uncle"], &["叔叔", "舅舅", "伯伯"]),
    relation(&["cousin", "cousins"], &["表哥", "表弟", "表姐", "表妹", "堂哥", "堂弟", "堂姐", "堂妹"]),
    relation(&["friend", "friends"], &["朋友"]),
    relation(&["colleague", "colleagues", "coworker", "coworkers"], &["同事"]),
    relation(&["boss", "manager"], &["老板", "领导", "经理"]),
    relation(&["neighbor", "neighbors", "neighbour", "neighbours"], &["邻居"]),
    relation(&["roommate", "roommates"], &["室友"]),
    relation(&["classmate", "classmates"], &["同学"]),
    relation(&["teammate", "teammates"], &["队友"]),
    relation(&["teacher"], &["老师"]),
];

/// The person a text names first, as an index into the relations; `None` when it names none.
/// English words are split at apostrophes too ("mum's" names mum); Chinese words are found
/// anywhere.
pub(crate) fn named(text: &str) -> Option<usize> {
    let lower = text.to_lowercase();
    let mut first: Option<(usize, usize)> = None;
    let mut consider = |at: usize, kind: usize| {
        if first.is_none_or(|(best, _)| at < best) {
            first = Some((at, kind));
        }
    };
    for (at, word) in parts(&lower) {
        if let Some(kind) = RELATIONS.iter().position(|r| r.en.contains(&word)) {
            consider(at, kind);
        }
    }
    for (kind, r) in RELATIONS.iter().enumerate() {
        if let Some(at) = r.zh.iter().filter_map(|w| lower.find(w)).min() {
            consider(at, kind);
        }
    }
    first.map(|(_, kind)| kind)
}

/// Whether `text` names the person `kind` (from [`named`]) anywhere, in either language.
pub(crate) fn names(text: &str, kind: usize) -> bool {
    let Some(r) = RELATIONS.get(kind) else {
        return false;
    };
    let lower = text.to_lowercase();
    r.zh.iter().any(|w| lower.contains(w)) || parts(&lower).any(|(_, w)| r.en.contains(&w))
}

/// The words of `lower` split at every character that is not a letter or a digit (apostrophes
/// too), with their byte offsets.
fn parts(lower: &str) -> impl Iterator<Item = (usize, &str)> {
    lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(move |w| (w.as_ptr() as usize - lower.as_ptr() as usize, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_person_by_any_of_their_words_in_either_language() {
        let mum = named("When is mum's big day?").expect("mum");
        assert_eq!(named("老妈哪天过生日？"), Some(mum));
        assert!(names("My mother's birthday is on March 3.", mum));
        assert!(names("我妈妈的生日是3月3日。", mum));
        assert!(!names("Our daughter Lily just started first grade.", mum));

        let daughter = named("我家闺女叫啥名字？").expect("daughter");
        assert_ne!(daughter, mum);
        assert!(names("Our daughter Lily just started first grade.", daughter));
        assert!(names("我女儿莉莉今年刚上一年级。", daughter));
        assert!(!names("我妈妈的生日是3月3日。", daughter));
        assert_eq!(named("What name did we give our little girl?"), Some(daughter));
    }

    #[test]
    fn the_first_person_named_is_the_one_asked_about_and_none_is_none() {
        let sister = named("sister").expect("sister");
        assert_eq!(named("What does my sister's husband do?"), Some(sister));
        assert_eq!(named("我妹妹的老公做什么工作？"), Some(sister));
        assert_eq!(named("Where do I live?"), None);
        assert_eq!(named("我住在哪里？"), None);
        // "son" is a word, not a part of one.
        assert_eq!(named("Which season do I like?"), None);
    }
}
