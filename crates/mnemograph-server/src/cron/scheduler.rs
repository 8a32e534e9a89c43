//! The scheduler: one task per server that, every poll interval, takes the crons' due ticks and
//! makes their runs.
//!
//! A tick is taken by moving the cron's next run date on with a compare-and-set
//! ([`CronKeeper::claim`]): of all the schedulers that saw it due, in this process or in the other
//! processes of a cluster, exactly one moves it and makes the run. The next run date is computed
//! from the time the scheduler looked, not from the date it replaces, as LangGraph's scheduler
//! computes it (`next_cron_date(cron["schedule"], cron["now"])`): a cron whose ticks were missed
//! while no scheduler ran (every process down) runs once when a scheduler next looks, then keeps
//! its schedule from then on, without catching up on the ticks it missed. A process that dies
//! between taking a tick and making its run loses that tick.

use std::future::Future;
use std::sync::Weak;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::time::MissedTickBehavior;

use super::fire::fire;
use super::record::CronRecord;
use super::schedule::Schedule;
use super::time::{stamp, utc_now};
use crate::app::App;
use crate::auth::Authenticator;
use crate::error::Result;
use crate::keeper::CronKeeper;

/// The next run date of a cron whose schedule fires no more: never reached.
const NEVER: &str = "9999-12-31T23:59:59.999999+00:00";

/// Looks for due crons every `every` and fires them, as `auth` authorizes their makers. Ends when
/// the server's state is dropped.
pub(crate) fn start(app: Weak<App>, auth: Authenticator, every: Duration) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every.max(Duration::from_millis(1)));
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(app) = app.upgrade() else { return };
            let taken = take_due(app.crons.as_ref(), utc_now(), |cron| fire(&app, &auth, cron)).await;
            if let Err(e) = taken {
                tracing::warn!(error = %e, "the cron scheduler could not read the due crons");
            }
        }
    });
}

/// Takes the ticks due at `now` in `crons` and hands each cron whose tick this call took to
/// `fire`; answers how many it took.
pub async fn take_due<F, Fut>(crons: &dyn CronKeeper, now: DateTime<Utc>, mut fire: F) -> Result<usize>
where
    F: FnMut(CronRecord) -> Fut,
    Fut: Future<Output = ()>,
{
    let at = stamp(now);
    let mut taken = 0;
    for cron in crons.due(&at).await? {
        let schedule = Schedule::parse(&cron.schedule, cron.timezone.as_deref());
        let next = match schedule.map(|s| s.next_after(now)) {
            Ok(Some(next)) => stamp(next),
            Ok(None) => NEVER.to_owned(),
            Err(e) => {
                tracing::warn!(cron_id = %cron.cron_id, error = %e, "a stored cron's schedule does not read");
                NEVER.to_owned()
            }
        };
        if crons.claim(&cron.cron_id, &cron.next_run_date, &next).await? {
            taken += 1;
            fire(cron).await;
        }
    }
    Ok(taken)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::Map;

    use super::*;
    use crate::keeper::LocalCrons;

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2030, 1, 1, h, m, s).single().expect("a valid time")
    }

    fn cron(id: &str, schedule: &str, next: DateTime<Utc>) -> CronRecord {
        CronRecord {
            cron_id: id.to_owned(),
            assistant_id: "a".into(),
            thread_id: None,
            user: None,
            payload: Map::new(),
            schedule: schedule.into(),
            timezone: None,
            next_run_date: stamp(next),
            end_time: None,
            metadata: Map::new(),
            on_run_completed: Some("delete".into()),
            enabled: true,
            created_at: stamp(at(9, 0, 0)),
            updated_at: stamp(at(9, 0, 0)),
        }
    }

    async fn fired_at(crons: &LocalCrons, now: DateTime<Utc>) -> Vec<String> {
        let mut fired = Vec::new();
        take_due(crons, now, |c| {
            fired.push(c.cron_id);
            std::future::ready(())
        })
        .await
        .expect("the due crons");
        fired
    }

    async fn next_of(crons: &LocalCrons, id: &str) -> String {
        crons.get(id, &crate::auth::Grant::all()).await.expect("the cron").next_run_date
    }

    #[tokio::test]
    async fn a_tick_missed_while_down_runs_once_then_schedules_from_now() {
        let crons = LocalCrons::default();
        // Due at 10:00, every five minutes; nothing looked until 10:17:30.
        crons.create(cron("c", "*/5 * * * *", at(10, 0, 0))).await.expect("create");
        assert_eq!(fired_at(&crons, at(10, 17, 30)).await, ["c"], "one run for the three missed ticks");
        assert_eq!(next_of(&crons, "c").await, stamp(at(10, 20, 0)), "the next tick counts from now");
        assert!(fired_at(&crons, at(10, 17, 31)).await.is_empty(), "the tick was taken");
        assert!(fired_at(&crons, at(10, 19, 59)).await.is_empty());
        assert_eq!(fired_at(&crons, at(10, 20, 0)).await, ["c"]);
        assert_eq!(next_of(&crons, "c").await, stamp(at(10, 25, 0)));
    }

    #[tokio::test]
    async fn a_disabled_or_ended_cron_does_not_fire() {
        let crons = LocalCrons::default();
        let mut off = cron("off", "* * * * *", at(10, 0, 0));
        off.enabled = false;
        let mut ended = cron("ended", "* * * * *", at(10, 0, 0));
        ended.end_time = Some(stamp(at(10, 0, 30)));
        for c in [off, ended, cron("on", "* * * * *", at(10, 0, 0))] {
            crons.create(c).await.expect("create");
        }
        assert_eq!(fired_at(&crons, at(10, 1, 0)).await, ["on"]);
    }

    #[tokio::test]
    async fn schedulers_racing_for_a_tick_take_it_once() {
        let crons = LocalCrons::default();
        crons.create(cron("c", "* * * * * */2", at(10, 0, 0))).await.expect("create");
        let now = at(10, 0, 1);
        let (a, b) = tokio::join!(fired_at(&crons, now), fired_at(&crons, now));
        assert_eq!(a.len() + b.len(), 1, "{a:?} {b:?}");
        assert_eq!(next_of(&crons, "c").await, stamp(at(10, 0, 2)));
    }
}
