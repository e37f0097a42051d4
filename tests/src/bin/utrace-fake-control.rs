//! A fake control socket, for the tests that play another user planting one in a shared
//! runtime folder: `utrace-fake-control FOLDER LINE...` makes FOLDER (open to all), binds
//! `FOLDER/<its pid>.sock` (open to all), prints its pid, and answers every connection
//! with the LINEs (`\e` for an escape character), until it is killed.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((folder, lines)) = args.split_first() else {
        eprintln!("usage: utrace-fake-control FOLDER LINE...");
        std::process::exit(2);
    };
    let open = |path: &str| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777))
            .unwrap_or_else(|e| panic!("{path}: {e}"));
    };
    let _ = std::fs::create_dir(folder);
    open(folder);
    let path = format!("{folder}/{}.sock", std::process::id());
    let listener = UnixListener::bind(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    open(&path);
    println!("{}", std::process::id());
    std::io::stdout().flush().expect("stdout");
    for stream in listener.incoming().flatten() {
        let mut request = String::new();
        let _ = BufReader::new(&stream).read_line(&mut request);
        let mut stream = stream;
        for line in lines {
            let _ = writeln!(stream, "{}", line.replace("\\e", "\u{1b}"));
        }
    }
}
