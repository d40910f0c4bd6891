//! A real `mesquite serve` for the binary's tests: the built binary on a free port with a
//! fresh data directory, killed and removed on drop so a failed assertion leaves nothing
//! behind.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tds::client::{Client, ClientConfig};

pub const PASSWORD: &str = "Stress-test-pw-1";

pub struct Server {
    pub child: Child,
    pub port: u16,
    /// The dedicated admin connection's port (0 when off).
    pub dac_port: u16,
    pub dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn spawn(dir: &std::path::Path, port: u16, dac_port: u16, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mesquite"))
        .args(["serve", "--data-dir"])
        .arg(dir)
        .args(["--port", &port.to_string(), "--dac-port", &dac_port.to_string(), "--memory-limit-mb", "64"])
        .args(extra)
        .env("MESQUITE_SA_PASSWORD", PASSWORD)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mesquite serve")
}

impl Server {
    pub fn start(tag: &str) -> Server {
        Server::start_with(tag, &[])
    }

    /// Started with extra `serve` options; the DAC listens on a free port of its own.
    pub fn start_with(tag: &str, extra: &[&str]) -> Server {
        let dir = std::env::temp_dir().join(format!("mesquite-cli-test-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let port = free_port();
        let dac_port = free_port();
        let child = spawn(&dir, port, dac_port, extra);
        let mut s = Server { child, port, dac_port, dir };
        s.wait_ready();
        s
    }

    /// kill -9, then a new server on the same data directory and ports (crash recovery).
    pub fn crash_and_restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.child = spawn(&self.dir, self.port, self.dac_port, &[]);
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        // Ready once a login succeeds; give up (and fail) if it never does.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match Client::connect(&self.config()) {
                Ok(_) => return,
                Err(e) => {
                    if let Ok(Some(status)) = self.child.try_wait() {
                        panic!("mesquite serve exited ({status}) before accepting logins: {e}");
                    }
                    assert!(Instant::now() < deadline, "mesquite serve not ready: {e}");
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }

    pub fn config(&self) -> ClientConfig {
        ClientConfig::new("127.0.0.1", self.port, "sa", PASSWORD)
    }

    /// The dedicated admin connection, as sa.
    pub fn dac_config(&self) -> ClientConfig {
        ClientConfig::new("127.0.0.1", self.dac_port, "sa", PASSWORD)
    }

    pub fn connect(&self) -> Client {
        Client::connect(&self.config()).expect("connect")
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGTERM; how long the process took to exit, None if it did not within `limit`.
    pub fn terminate(&mut self, limit: Duration) -> Option<Duration> {
        let start = Instant::now();
        // SAFETY: kill(2) on the child's own pid, which this struct has not reaped.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        while start.elapsed() < limit {
            if let Ok(Some(_)) = self.child.try_wait() {
                return Some(start.elapsed());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}
