//! Output paths checked before the work, not after it: every command that writes a file or a
//! directory (`--json`, `--csv`, `--out`, `-o`, `--plot`, `--charts`, `--summary`, a daemon's
//! `--data-dir`) asks here first, so a run of minutes is not thrown away because its result
//! cannot be written (adversarial pass 34, C8 and C9), and every command says the same thing
//! about the same path: a directory where a file is wanted, a symbolic link loop, a link that
//! leads nowhere, a parent that is missing or not writable.
//!
//! The checks read the file system and change nothing. A path can still fail later (a full
//! disk, `/dev/full`, a file removed meanwhile): the writers name the file then.

use std::ffi::CString;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Why `dir` cannot be a directory to write into, if that can be told before trying: a
/// symbolic link loop, a link that leads nowhere, or something that is not a directory.
/// (`create_dir_all` said `File exists` of the first two.) `None` when it is a directory or
/// does not exist yet (it is made then, which names any other problem).
pub fn dir_problem(dir: &Path) -> Option<String> {
    let link = std::fs::symlink_metadata(dir).ok()?;
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => None,
        Ok(m) if m.is_file() => Some("exists and is a file, not a directory".into()),
        Ok(_) => Some("exists and is not a directory".into()),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            Some("a symbolic link loop (it leads back to itself)".into())
        }
        Err(e) if link.file_type().is_symlink() => Some(match std::fs::read_link(dir) {
            Ok(to) if e.kind() == ErrorKind::NotFound => format!(
                "a symbolic link to {}, which does not exist (a dangling link)",
                to.display()
            ),
            _ => format!("a symbolic link that cannot be followed: {e}"),
        }),
        Err(e) => Some(e.to_string()),
    }
}

/// Whether the writer makes a missing parent directory of its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parents {
    /// The writer makes missing parents (`sim --json a/b/c.json`): the nearest existing one
    /// must be a directory this process may write into.
    Made,
    /// The writer does not: the parent must exist already.
    MustExist,
}

/// Why a file cannot be written at `path`, if that can be told before trying: an existing
/// directory, a symbolic link loop, a dangling link whose target cannot be made, a file or
/// parent directory this process may not write, a parent that is missing (when the writer
/// does not make it) or is not a directory.
pub fn file_problem(path: &Path, parents: Parents) -> Option<String> {
    file_problem_at(path, parents, 0)
}

/// Links followed for a dangling link's target before giving up (as the kernel's 40).
const MAX_LINKS: usize = 40;

fn file_problem_at(path: &Path, parents: Parents, depth: usize) -> Option<String> {
    if path.as_os_str().is_empty() {
        return Some("an empty path; name a file".into());
    }
    match std::fs::symlink_metadata(path) {
        Ok(link) => match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => Some("is a directory; name a file".into()),
            Ok(_) if !may(path, libc::W_OK) => {
                Some("exists and this process may not write it (permission denied)".into())
            }
            Ok(_) => None,
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                Some("a symbolic link loop (it leads back to itself)".into())
            }
            Err(e) if link.file_type().is_symlink() && e.kind() == ErrorKind::NotFound => {
                // Writing through a dangling link makes its target: fine when that can be made.
                let to = std::fs::read_link(path).ok()?;
                let target = match path.parent() {
                    Some(p) if to.is_relative() => p.join(&to),
                    _ => to.clone(),
                };
                if depth >= MAX_LINKS {
                    return Some("a chain of too many symbolic links".into());
                }
                file_problem_at(&target, Parents::MustExist, depth + 1).map(|why| {
                    format!(
                        "a symbolic link to {}, which does not exist (a dangling link) and \
                         cannot be made: {why}",
                        to.display()
                    )
                })
            }
            Err(e) => Some(e.to_string()),
        },
        Err(e) if e.kind() == ErrorKind::NotFound => parent_problem(path, parents),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
            Some("a path through something that is not a directory".into())
        }
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            Some("a path through a symbolic link loop".into())
        }
        Err(e) => Some(e.to_string()),
    }
}

/// The parent of a file not there yet: a writable directory, or missing and made later.
fn parent_problem(path: &Path, parents: Parents) -> Option<String> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut dir = parent.clone();
    loop {
        if std::fs::symlink_metadata(&dir).is_ok() {
            break;
        }
        if parents == Parents::MustExist {
            return Some(format!("its directory {} does not exist", parent.display()));
        }
        dir = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
    }
    if let Some(why) = dir_problem(&dir) {
        return Some(format!("its directory {}: {why}", dir.display()));
    }
    if !may(&dir, libc::W_OK | libc::X_OK) {
        return Some(format!(
            "this process may not write into its directory {} (permission denied)",
            dir.display()
        ));
    }
    None
}

/// `access(2)`: may this process (its real ids, as the shell would) do `mode` to `path`? A
/// path that cannot be passed (a NUL) answers yes: the writer will say why it fails.
fn may(path: &Path, mode: libc::c_int) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return true;
    };
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

/// [`file_problem`] as an error naming the flag: `--json P: is a directory; name a file`.
pub fn check_file(flag: &str, path: &Path, parents: Parents) -> Result<(), String> {
    match file_problem(path, parents) {
        None => Ok(()),
        Some(why) => Err(format!("{flag} {}: {why}", path.display())),
    }
}

/// [`dir_problem`] as an error naming the flag: `--plot P: a symbolic link loop (...)`.
pub fn check_dir(flag: &str, path: &Path) -> Result<(), String> {
    match dir_problem(path) {
        None => Ok(()),
        Some(why) => Err(format!("{flag} {}: {why}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn files_that_cannot_be_written_are_named_before_trying() {
        let d = tempfile::tempdir().unwrap();
        let p = |n: &str| d.path().join(n);
        std::fs::create_dir(p("dir")).unwrap();
        std::fs::write(p("file"), "x").unwrap();
        symlink(p("loop2"), p("loop1")).unwrap();
        symlink(p("loop1"), p("loop2")).unwrap();
        symlink("nowhere/x", p("dangling")).unwrap();
        symlink("made", p("dangling_ok")).unwrap();
        let why = |n: &str| file_problem(&p(n), Parents::MustExist);
        assert_eq!(why("dir").unwrap(), "is a directory; name a file");
        assert!(why("loop1").unwrap().contains("symbolic link loop"));
        let dangling = why("dangling").unwrap();
        assert!(
            dangling.contains("a symbolic link to nowhere/x"),
            "{dangling}"
        );
        assert!(dangling.contains("dangling link"), "{dangling}");
        assert!(dangling.contains("does not exist"), "{dangling}");
        // A dangling link whose target can be made is written through, as the shell does.
        assert_eq!(why("dangling_ok"), None);
        assert_eq!(why("file"), None);
        assert_eq!(why("new.json"), None);
        // A missing parent: refused when the writer does not make it, else its nearest
        // existing ancestor must be a directory.
        assert!(why("no/such/f.json").unwrap().contains("its directory"));
        assert_eq!(file_problem(&p("no/such/f.json"), Parents::Made), None);
        let through_file = file_problem(&p("file/x.json"), Parents::Made).unwrap();
        assert!(through_file.contains("not a directory"), "{through_file}");
        let through_loop = file_problem(&p("loop1/x.json"), Parents::Made).unwrap();
        assert!(through_loop.contains("loop"), "{through_loop}");
        assert!(file_problem(Path::new(""), Parents::Made).is_some());
        assert_eq!(
            file_problem(Path::new("/dev/null"), Parents::MustExist),
            None
        );
        let e = check_file("--json", &p("dir"), Parents::Made).unwrap_err();
        assert!(
            e.starts_with("--json ") && e.ends_with("is a directory; name a file"),
            "{e}"
        );
    }

    #[test]
    fn directories_that_are_loops_dangling_links_or_files_are_named() {
        let d = tempfile::tempdir().unwrap();
        let p = |n: &str| d.path().join(n);
        std::fs::write(p("file"), "x").unwrap();
        symlink(p("loop2"), p("loop1")).unwrap();
        symlink(p("loop1"), p("loop2")).unwrap();
        symlink("nowhere", p("dangling")).unwrap();
        assert!(dir_problem(&p("loop1")).unwrap().contains("loop"));
        assert!(dir_problem(&p("dangling"))
            .unwrap()
            .contains("a symbolic link to nowhere, which does not exist (a dangling link)"));
        assert!(dir_problem(&p("file")).unwrap().contains("is a file"));
        assert_eq!(dir_problem(&p("new")), None);
        assert_eq!(dir_problem(d.path()), None);
    }
}
