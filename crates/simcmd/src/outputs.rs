//! The one check of a command's output paths, made before its work (adversarial pass 34, C9):
//! every command that writes a file or a directory names its outputs here at its start, so
//! an output that cannot be written is refused before a run of minutes, not after it, and
//! every command says the same of the same path (the reasons come from
//! [`coflowkit_model::out_path`]).
//!
//! ```ignore
//! outputs::check(&[Out::file("--json", a.json.as_deref()), Out::dir("--plot", a.plot.as_deref())])?;
//! ```

use std::path::Path;

use anyhow::{bail, Result};
use coflowkit_model::out_path::{dir_problem, file_problem, Parents};

/// One output of a command: its flag, its path (`None`: not asked for) and what it is.
#[derive(Debug, Clone, Copy)]
pub struct Out<'a> {
    flag: &'a str,
    path: Option<&'a Path>,
    kind: Kind,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A file whose parent directory must exist.
    File,
    /// A file whose missing parent directories the writer makes.
    FileInNewDirs,
    /// A directory, made if missing.
    Dir,
}

impl<'a> Out<'a> {
    /// A file written with `std::fs::write` or `File::create`: its directory must exist.
    pub fn file(flag: &'a str, path: Option<&'a Path>) -> Self {
        Out {
            flag,
            path,
            kind: Kind::File,
        }
    }
    /// A file whose writer makes its missing directories (`simcmd::report`'s writers).
    pub fn file_in_new_dirs(flag: &'a str, path: Option<&'a Path>) -> Self {
        Out {
            flag,
            path,
            kind: Kind::FileInNewDirs,
        }
    }
    /// A directory written into, made if missing (`--plot`, `--charts`, `--out DIR`).
    pub fn dir(flag: &'a str, path: Option<&'a Path>) -> Self {
        Out {
            flag,
            path,
            kind: Kind::Dir,
        }
    }

    fn problem(&self) -> Option<String> {
        let p = self.path?;
        match self.kind {
            Kind::File => file_problem(p, Parents::MustExist),
            Kind::FileInNewDirs => file_problem(p, Parents::Made),
            Kind::Dir => dir_problem(p).map(|why| match why.as_str() {
                w if w.starts_with("exists and is") => {
                    format!("{w}; name a directory (it is created if missing)")
                }
                _ => why,
            }),
        }
    }
}

/// Refuse the first output that cannot be written, naming its flag and path and why
/// (`--json out: is a directory; name a file`). Call it before the work.
pub fn check(outs: &[Out<'_>]) -> Result<()> {
    for o in outs {
        if let Some(why) = o.problem() {
            let p = o.path.expect("a problem has a path");
            bail!("{} {}: {why}", o.flag, p.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_output_that_cannot_be_written_is_named_by_its_flag() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let dir = d.path();
        check(&[Out::file("--json", None), Out::dir("--plot", Some(dir))]).unwrap();
        let e = check(&[
            Out::file("--json", Some(&d.path().join("new.json"))),
            Out::file("--csv", Some(dir)),
            Out::dir("--plot", Some(&file)),
        ])
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            format!("--csv {}: is a directory; name a file", dir.display())
        );
        let e = check(&[Out::dir("--plot", Some(&file))])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("exists and is a file, not a directory; name a directory"),
            "{e}"
        );
        let deep = d.path().join("a/b/c.json");
        check(&[Out::file_in_new_dirs("--json", Some(&deep))]).unwrap();
        assert!(check(&[Out::file("--json", Some(&deep))]).is_err());
    }
}
