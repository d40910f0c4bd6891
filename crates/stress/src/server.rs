//! A `mesquite serve` child process for one benchmark run (bench/durability, bench/tds): a
//! fresh data directory under the system temp directory, a free loopback port, a generated
//! sa password. Stopped with SIGTERM (a clean shutdown) and its directory removed on drop,
//! also when the run fails.

use std::fs::File;
use std::io::Read;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tds::client::ClientConfig;

pub struct MesquiteServer {
    child: Option<Child>,
    dir: PathBuf,
    pub port: u16,
    password: String,
    app_name: String,
}

impl MesquiteServer {
    /// `tag` names the run in the data directory's name and the client's app name.
    pub fn start(bin: &Path, memory_mb: u64, tag: &str) -> Result<MesquiteServer, String> {
        let stamp =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("mesquite-{tag}-{}-{stamp}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating the data directory: {e}"))?;
        let port = crate::pg::free_port().map_err(|e| e.to_string())?;
        let password = format!("Bench-{:x}-Aa1", stamp ^ u128::from(std::process::id()));
        let log = File::create(dir.join("serve.out")).map_err(|e| e.to_string())?;
        let log2 = log.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(bin)
            .arg("serve")
            .arg("--data-dir")
            .arg(dir.join("data"))
            .args(["--addr", "127.0.0.1", "--port", &port.to_string(), "--memory-limit-mb", &memory_mb.to_string()])
            .env("MESQUITE_SA_PASSWORD", &password)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", bin.display()))?;
        let mut server = MesquiteServer { child: Some(child), dir, port, password, app_name: tag.to_string() };
        server.wait_ready()?;
        Ok(server)
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return Ok(());
            }
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    self.child = None;
                    return Err(format!("mesquite serve exited ({status}):\n{}", self.log_tail()));
                }
            }
            if Instant::now() > deadline {
                return Err(format!("mesquite serve did not listen within 60 s:\n{}", self.log_tail()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn log_tail(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = File::open(self.dir.join("serve.out")) {
            let _ = f.read_to_string(&mut s);
        }
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    pub fn config(&self, database: Option<&str>) -> ClientConfig {
        let mut c = ClientConfig::new("127.0.0.1", self.port, "sa", self.password.clone());
        c.database = database.map(str::to_string);
        c.app_name = self.app_name.clone();
        c
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(None)))
    }

    /// SIGTERM (checkpoint and close), then SIGKILL if it takes more than 60 s.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
            }
        }
    }
}

impl Drop for MesquiteServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
