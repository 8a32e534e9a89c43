//! Quickstart: a typed state with a reducer, a conditional edge, and persistence in memory.
//!
//! Needs no services. Run it with `cargo run -p quickstart`.
//!
//! A tiny support desk: `classify` reads the customer's message and a conditional edge routes it to
//! `billing` or `tech`; each appends to the conversation (`add_messages` reducer) and to an audit
//! log (`append` reducer). The thread is checkpointed in memory, so a second message on the same
//! thread continues the conversation, and the history of checkpoints can be listed.

use mnemograph_core::checkpoint::ListOptions;
use mnemograph_core::prelude::*;

#[derive(State, Clone, Default, Debug)]
struct Ticket {
    /// The conversation: merged by id, never overwritten.
    #[reducer(add_messages)]
    messages: Vec<Message>,
    /// Every routing decision, appended.
    #[reducer(append)]
    audit: Vec<String>,
    /// The current department (last value wins).
    department: String,
}

async fn classify(t: Ticket) -> Result<TicketUpdate> {
    let text = t.messages.last().map(Message::text).unwrap_or_default().to_lowercase();
    let department = if ["invoice", "refund", "charge", "发票"].iter().any(|w| text.contains(w)) {
        "billing"
    } else {
        "tech"
    };
    Ok(TicketUpdate::department(department).with_audit(vec![format!("routed to {department}")]))
}

async fn billing(t: Ticket) -> Result<TicketUpdate> {
    let n = t.messages.iter().filter(|m| m.text().contains("[billing]")).count();
    Ok(TicketUpdate::messages(vec![Message::ai(format!(
        "[billing] reply #{}: a refund form is on its way.",
        n + 1
    ))]))
}

async fn tech(_t: Ticket) -> Result<TicketUpdate> {
    Ok(TicketUpdate::messages(vec![Message::ai("[tech] have you tried turning it off and on again?")]))
}

#[tokio::main]
async fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    // Warnings on stderr; with `OTEL_EXPORTER_OTLP_ENDPOINT` set, each `graph.run` and its
    // `graph.node` spans go to that collector. Held to the end: dropping it flushes them.
    let _telemetry = mnemograph_telemetry::init("quickstart", "warn")?;
    let graph = StateGraph::<Ticket>::new()
        .add_node("classify", classify)
        .add_node("billing", billing)
        .add_node("tech", tech)
        .add_edge(START, "classify")
        .add_conditional_edges("classify", |t: &Ticket| t.department.clone(), ["billing", "tech"])
        .add_edge("billing", END)
        .add_edge("tech", END)
        .compile_with(InMemoryCheckpointer::new())?;

    let config = RunConfig::thread("customer-42");
    for text in ["My invoice charged me twice", "And the app crashes on start", "发票还没收到"] {
        let out = graph.invoke(TicketUpdate::messages(vec![Message::human(text)]), &config).await?;
        println!("user: {text}\n  bot: {}", out.messages.last().map(Message::text).unwrap_or_default());
    }

    let state = graph.get_state(&config).await?;
    println!(
        "\nthread customer-42: {} messages, audit = {:?}",
        state.values.messages.len(),
        state.values.audit
    );
    let history = graph.get_state_history(&config, ListOptions::new()).await?;
    println!("{} checkpoints, newest first:", history.len());
    for snap in history.iter().take(5) {
        let meta = snap.metadata.as_ref().expect("saved checkpoints have metadata");
        let id = snap.config.as_ref().and_then(|c| c.checkpoint_id.clone()).unwrap_or_default();
        println!("  {id}  step {:>2}  {:<6} next {:?}", meta.step, meta.source.as_str(), snap.next);
    }
    Ok(())
}
