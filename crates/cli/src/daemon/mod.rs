//! `cuzk daemon`: the proving service, speaking the `cuzk.v1.ProvingEngine` gRPC protocol that Curio drives.

mod exec;
mod jobs;
mod journal;
mod service;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use rpc::v1::proving_engine_server::ProvingEngineServer;
use tonic::service::interceptor::InterceptedService;
use tonic::{Request, Status};

use crate::porep_cmd::EngineArgs;
pub use exec::{TestSpec, MAX_TEST_BLOCKS};

const AFTER_HELP: &str = "\
Curio connects with its cuzk address set to this daemon's --listen (for example 127.0.0.1:9820 or \
unix:///run/cuzk.sock).

Every accepted job is journaled in --state-dir before SubmitProof replies. After a crash or restart, unfinished \
jobs run again and finished ones are served from there: await a job by its id, or submit the same request_id again.

Test circuits (proof kind CUZK_TEST_CIRCUIT = 100, a value Curio never sends) prove SHA-256 with parameters \
generated in the cuzk cache: `cuzk client prove --test-blocks 1` tries the daemon out.";

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct DaemonArgs {
    /// Where to listen: HOST:PORT, or unix:PATH for a Unix socket. An address beyond loopback needs --token-file.
    #[arg(long, default_value = "127.0.0.1:9820", value_name = "ADDR")]
    listen: String,
    /// A file holding the token every call must then carry (`authorization: Bearer <token>` metadata).
    #[arg(long, env = "CUZK_DAEMON_TOKEN_FILE", value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Where accepted jobs and results are journaled (default: `daemon` beside cuzk's parameter cache).
    #[arg(long, env = "CUZK_DAEMON_STATE", value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Most jobs waiting in the queue; SubmitProof answers RESOURCE_EXHAUSTED beyond that.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_queue: u64,
    /// Largest message accepted or sent, MiB (a 32 GiB sector's C1 output is about 50 MB; Curio allows 256).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=4096))]
    max_message_mib: u64,
    /// Keep a finished job's result this long after it finished (s, m, h or d suffix).
    #[arg(long, default_value = "24h", value_parser = parse_duration)]
    result_ttl: Duration,
    /// ... but only this long after it was first fetched (so a client whose connection dropped can fetch again).
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    fetched_ttl: Duration,
    /// Load these parameter sets at start (comma-separated circuit ids, e.g. porep-32g or sha256-b1).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    preload: Vec<String>,
    #[command(flatten)]
    engine: EngineArgs,
}

/// `30s`, `10m`, `24h`, `7d`, or plain seconds.
pub fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    let (digits, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (like 30s, 10m, 24h, 7d)"))?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (s, m, h or d)")),
    };
    Ok(Duration::from_secs(secs))
}

/// A daemon address: TCP or a Unix socket.
#[derive(Clone, Debug, PartialEq)]
pub enum Addr {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

impl Addr {
    /// `HOST:PORT`, `unix:PATH` or `unix://PATH` (gRPC's spellings).
    pub fn parse(s: &str) -> Result<Self> {
        if let Some(rest) = s.strip_prefix("unix:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if path.is_empty() {
                bail!("{s:?}: no socket path after unix:");
            }
            return Ok(Addr::Unix(PathBuf::from(path)));
        }
        let s = s.strip_prefix("http://").unwrap_or(s);
        if let Ok(a) = s.parse() {
            return Ok(Addr::Tcp(a));
        }
        use std::net::ToSocketAddrs;
        s.to_socket_addrs()
            .with_context(|| format!("{s:?} is not HOST:PORT or unix:PATH"))?
            .next()
            .map(Addr::Tcp)
            .with_context(|| format!("{s:?} resolves to no address"))
    }
}

/// Reads a token file: its first line, trimmed; an empty token is refused.
pub fn read_token(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the token file {}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim().to_owned();
    if token.is_empty() {
        bail!("the token file {} is empty", path.display());
    }
    Ok(token)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub fn run(a: DaemonArgs) -> Result<()> {
    let addr = Addr::parse(&a.listen)?;
    let token = a.token_file.as_deref().map(read_token).transpose()?;
    if let Addr::Tcp(sock) = &addr {
        if !sock.ip().is_loopback() && token.is_none() {
            bail!(
                "--listen {} is reachable from other machines: give --token-file too, so every call must carry \
                 the token (or listen on 127.0.0.1 or a unix: socket)",
                a.listen
            );
        }
    }
    let state_dir = match &a.state_dir {
        Some(d) => d.clone(),
        None => crate::cache::dir(None)?
            .parent()
            .map(|p| p.join("daemon"))
            .context("no directory for the daemon's state: pass --state-dir")?,
    };
    let journal = Arc::new(journal::Journal::open(&state_dir)?);
    let recovered = journal.recover()?;
    let table = Arc::new(jobs::Table::new(a.max_queue as usize));
    for (path, why) in &recovered.corrupt {
        tracing::error!(file = %path.display(), "journal record failed its checks and was moved aside: {why}");
    }
    let pending = recovered.pending.len();
    for r in recovered.pending {
        let req = r.request.unwrap_or_default();
        table.restore_pending(jobs::Job::new(
            r.job_id,
            req.request_id,
            rpc::v1::ProofKind::try_from(req.proof_kind).unwrap_or_default(),
            r.circuit_id,
            rpc::v1::Priority::try_from(req.priority).unwrap_or_default(),
            r.seq,
            r.submitted_unix_ms,
            jobs::Phase::Pending,
        ));
    }
    let done = recovered.done.len();
    for (r, fetched) in recovered.done {
        let job = jobs::Job::new(
            r.job_id,
            r.request_id,
            rpc::v1::ProofKind::try_from(r.proof_kind).unwrap_or_default(),
            String::new(),
            rpc::v1::Priority::Normal,
            0,
            0,
            jobs::Phase::Pending,
        );
        job.fetched_unix_ms
            .store(fetched, std::sync::atomic::Ordering::Relaxed);
        table.restore_done(job, r.result.unwrap_or_default(), r.finished_unix_ms);
    }
    eprintln!(
        "cuzk daemon: state {} ({pending} unfinished job(s) queued again, {done} result(s) kept, {} corrupt record(s) \
         moved aside)",
        state_dir.display(),
        recovered.corrupt.len()
    );

    let engines = Arc::new(exec::Engines::new(a.engine));
    for id in &a.preload {
        exec::CircuitId::parse(id).map_err(anyhow::Error::msg)?;
        let t = Instant::now();
        engines
            .get_or_load(id)
            .with_context(|| format!("--preload {id}"))?;
        eprintln!(
            "cuzk daemon: loaded {id} in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    let executor = exec::Executor {
        table: table.clone(),
        journal: journal.clone(),
        engines: engines.clone(),
    };
    let worker = std::thread::Builder::new()
        .name("cuzk-executor".into())
        .spawn(move || executor.run())
        .context("starting the executor thread")?;

    let service = service::Service {
        table: table.clone(),
        journal: journal.clone(),
        engines,
        started: Instant::now(),
        checks: tokio::sync::Semaphore::new(2),
        recovered: pending as u64,
        corrupt: recovered.corrupt.len() as u64,
    };
    let limit = (a.max_message_mib as usize) << 20;
    let server = ProvingEngineServer::new(service)
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit);
    let auth = move |req: Request<()>| -> std::result::Result<Request<()>, Status> {
        let Some(token) = &token else {
            return Ok(req);
        };
        let given = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        if constant_time_eq(given.as_bytes(), token.as_bytes()) {
            Ok(req)
        } else {
            Err(Status::unauthenticated(
                "missing or wrong token (send `authorization: Bearer <token>` metadata)",
            ))
        }
    };
    let svc = InterceptedService::new(server, auth);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("cuzk-rpc")
        .build()
        .context("starting the async runtime")?;
    let gc_table = table.clone();
    let gc_journal = journal.clone();
    let (result_ttl, fetched_ttl) = (
        a.result_ttl.as_millis() as u64,
        a.fetched_ttl.as_millis() as u64,
    );
    let served = runtime.block_on(async move {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(30));
            loop {
                tick.tick().await;
                for job in gc_table.expire(jobs::unix_ms(), result_ttl, fetched_ttl) {
                    let j = gc_journal.clone();
                    let _ = tokio::task::spawn_blocking(move || j.remove(&job.id)).await;
                }
            }
        });
        let router = tonic::transport::Server::builder().add_service(svc);
        let shutdown = async {
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .expect("installing a SIGTERM handler");
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            eprintln!("cuzk daemon: stopping; unfinished jobs stay in the journal and run on the next start");
        };
        match &addr {
            Addr::Tcp(sock) => {
                let listener = tokio::net::TcpListener::bind(sock)
                    .await
                    .with_context(|| format!("listening on {sock}"))?;
                eprintln!("cuzk daemon: listening on {}", listener.local_addr()?);
                router
                    .serve_with_incoming_shutdown(
                        tokio_stream::wrappers::TcpListenerStream::new(listener),
                        shutdown,
                    )
                    .await
                    .context("serving")
            }
            Addr::Unix(path) => {
                let listener = bind_unix(path)?;
                eprintln!("cuzk daemon: listening on unix:{}", path.display());
                let served = router
                    .serve_with_incoming_shutdown(
                        tokio_stream::wrappers::UnixListenerStream::new(listener),
                        shutdown,
                    )
                    .await
                    .context("serving");
                let _ = std::fs::remove_file(path);
                served
            }
        }
    });
    table.stop();
    // A job being proved is not waited for: its record stays, and it runs again on the next start.
    drop(worker);
    runtime.shutdown_timeout(Duration::from_secs(1));
    served
}

/// Binds a Unix socket, replacing a stale socket file that no daemon answers on.
fn bind_unix(path: &Path) -> Result<tokio::net::UnixListener> {
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            bail!("another process is listening on {}", path.display());
        }
        std::fs::remove_file(path)
            .with_context(|| format!("removing the stale socket {}", path.display()))?;
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    tokio::net::UnixListener::bind(path).with_context(|| format!("listening on {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_durations_parse() {
        assert_eq!(
            Addr::parse("127.0.0.1:9820").unwrap(),
            Addr::Tcp("127.0.0.1:9820".parse().unwrap())
        );
        assert_eq!(
            Addr::parse("unix:///run/cuzk.sock").unwrap(),
            Addr::Unix("/run/cuzk.sock".into())
        );
        assert_eq!(
            Addr::parse("unix:rel.sock").unwrap(),
            Addr::Unix("rel.sock".into())
        );
        assert!(Addr::parse("unix:").is_err());
        assert!(Addr::parse("no-port").is_err());
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("2d").unwrap(), Duration::from_secs(172_800));
        assert!(parse_duration("5w").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("h").is_err());
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
