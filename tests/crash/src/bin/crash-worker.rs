//! One worker process of the crash harness: runs or resumes one thread of the workload until it
//! completes or is killed. Arguments are `key=value` pairs (see `crash::worker::WorkerSpec`).

use std::process::ExitCode;

use crash::worker::{self, WorkerSpec};

fn main() -> ExitCode {
    let result = WorkerSpec::from_args(std::env::args().skip(1)).and_then(|spec| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|source| crash::Error::Io { path: "<tokio runtime>".into(), source })?;
        runtime.block_on(worker::run(&spec))?;
        // The runtime is dropped first: nothing of the run is left running while the worker waits.
        drop(runtime);
        worker::linger()
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The whole chain of causes: the harness prints this when it fails the test.
            let mut line = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                line.push_str(&format!(": {s}"));
                source = s.source();
            }
            eprintln!("crash-worker: {line}");
            ExitCode::from(2)
        }
    }
}
