//! A real load balancer for the replica tests: Debian's nginx, round-robin over the given
//! upstreams, on a loopback port of its own; stopped on drop.
//!
//! The configuration is `deploy/nginx/ferry.conf`, the file the book's "Several replicas" chapter
//! shows, with the test's addresses put in, inside a main file that puts every path nginx
//! writes into a scratch directory.

use super::{Running, scratch_dir, workspace_root, write};
use ferry_testkit::required_or_skip;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Debian's nginx binary (`FERRY_NGINX` overrides it).
fn nginx_binary() -> PathBuf {
    std::env::var_os("FERRY_NGINX")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/sbin/nginx"))
}

/// A running nginx.
pub(crate) struct Balancer {
    _child: Running,
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
}

impl Balancer {
    /// Whether nginx is here; a skip notice when not (in CI that is a failure).
    pub(crate) fn available(test: &str) -> bool {
        let nginx = nginx_binary();
        let missing = (!nginx.is_file()).then(|| {
            format!(
                "{} is not there; install Debian's nginx (or set FERRY_NGINX)",
                nginx.display()
            )
        });
        required_or_skip(test, missing)
    }

    /// A loopback port for a balancer (free now), so that replicas can name it as their
    /// public URL before it starts.
    pub(crate) fn free_port() -> u16 {
        let probe = TcpListener::bind("127.0.0.1:0").expect("bind");
        probe.local_addr().expect("addr").port()
    }

    /// nginx on `port` in front of `upstreams` (`http://127.0.0.1:PORT` each), round-robin;
    /// `None` after a skip notice when nginx is not installed (in CI that is a failure).
    pub(crate) fn start(test: &str, port: u16, upstreams: &[&str]) -> Option<Balancer> {
        if !Balancer::available(test) {
            return None;
        }
        let nginx = nginx_binary();
        let dir = scratch_dir("nginx");
        let servers: Vec<String> = upstreams
            .iter()
            .map(|u| format!("server {};", u.trim_start_matches("http://")))
            .collect();
        let d = dir.display();
        let config = format!(
            "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log stderr notice;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  \
             proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n  \
             uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n{}\n}}\n",
            shipped_config(&servers, port)
        );
        let conf = write(&dir, "nginx.conf", &config);
        let mut child = Command::new(&nginx)
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", nginx.display()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let child = Running(child);
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        // The master has bound its port once it starts its workers.
        let mut seen = Vec::new();
        loop {
            match lines.recv_timeout(Duration::from_secs(30)) {
                Ok(line) if line.contains("start worker process") => break,
                Ok(line) => seen.push(line),
                Err(_) => panic!("nginx did not start: {seen:#?}"),
            }
        }
        Some(Balancer {
            _child: child,
            base_url: format!("http://127.0.0.1:{port}"),
        })
    }
}

/// `deploy/nginx/ferry.conf` with `servers` as the upstreams and `port` as the listening port.
fn shipped_config(servers: &[String], port: u16) -> String {
    let path = workspace_root().join("deploy/nginx/ferry.conf");
    let shipped =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let upstreams = "server 127.0.0.1:8701;\n    server 127.0.0.1:8702;";
    let listen = "listen 127.0.0.1:8700;";
    assert!(
        shipped.contains(upstreams) && shipped.contains(listen),
        "{} no longer names the replicas 8701 and 8702 behind 8700",
        path.display()
    );
    shipped
        .replace(upstreams, &servers.join("\n    "))
        .replace(listen, &format!("listen 127.0.0.1:{port};"))
}
