//! The directory a local replay's daemons spill put data to: named by the process id, removed
//! when the replay ends however it returns, and, since a killed run cannot remove its own,
//! those of runs whose process is gone are removed by the next one.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

const PREFIX: &str = "coflowkit-replay-";

/// A spill directory, removed on drop.
pub struct SpillDir(PathBuf);

impl SpillDir {
    /// A fresh directory under `parent` (the system's temporary directory in use), after
    /// removing those that dead runs left there.
    pub fn create(parent: &Path) -> Result<SpillDir> {
        sweep(parent);
        let p = parent.join(format!("{PREFIX}{}", std::process::id()));
        std::fs::create_dir_all(&p).with_context(|| format!("creating {}", p.display()))?;
        Ok(SpillDir(p))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

/// Remove `dir` while other threads of this process may still be creating files or daemon data
/// dirs in it (an interrupt arrives at any point of a replay): remove until it stays gone for
/// a tenth of a second, at most about two seconds.
pub fn remove_racing(dir: &Path) {
    let mut gone_checks = 0;
    for _ in 0..100 {
        if dir.exists() {
            gone_checks = 0;
            let _ = std::fs::remove_dir_all(dir);
        } else {
            gone_checks += 1;
            if gone_checks == 5 {
                return;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Remove the spill directories under `parent` whose process is gone (a reused id keeps its
/// directory: it is then removed by a later run).
fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = (name.to_str())
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_runs_directory_is_swept_and_ours_removed_on_drop() {
        let parent = tempfile::tempdir().unwrap();
        // No process has this id (Linux ids stay below 2^22).
        let dead = parent.path().join(format!("{PREFIX}4294967294"));
        std::fs::create_dir_all(dead.join("fair")).unwrap();
        let unrelated = parent.path().join("coflowkit-replay-notes");
        std::fs::create_dir_all(&unrelated).unwrap();
        let ours = SpillDir::create(parent.path()).unwrap();
        assert!(!dead.exists(), "a dead run's directory is swept");
        assert!(
            unrelated.exists(),
            "a name without a process id is left alone"
        );
        let path = ours.path().to_path_buf();
        assert!(path.is_dir());
        drop(ours);
        assert!(!path.exists(), "removed on drop");
    }

    #[test]
    fn removal_outlasts_a_thread_that_keeps_recreating_the_directory() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("spill");
        let d = dir.clone();
        // A daemon starting up as the interrupt arrives: creates its data dir a few times.
        let writer = std::thread::spawn(move || {
            for i in 0..10 {
                let _ = std::fs::create_dir_all(d.join("fair"));
                let _ = std::fs::write(d.join("fair").join(format!("{i}")), b"x");
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        });
        remove_racing(&dir);
        writer.join().unwrap();
        assert!(!dir.exists(), "recreated after removal");
    }
}
