//! Rank and size from the environment a launcher leaves: our own `--local`, Open MPI's
//! `mpirun`, any PMI launcher (MPICH's Hydra, Intel MPI) or Slurm's `srun`, first match wins.

use crate::LaunchError;

/// Which launcher's variables gave the rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launcher {
    Coflowkit,
    OpenMpi,
    Pmi,
    Slurm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankInfo {
    pub rank: u32,
    pub size: u32,
    pub launcher: Launcher,
}

/// (rank variable, size variable, launcher), in the order they are tried.
pub const SOURCES: [(&str, &str, Launcher); 4] = [
    ("COFLOWKIT_RANK", "COFLOWKIT_SIZE", Launcher::Coflowkit),
    (
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        Launcher::OpenMpi,
    ),
    ("PMI_RANK", "PMI_SIZE", Launcher::Pmi),
    ("SLURM_PROCID", "SLURM_NTASKS", Launcher::Slurm),
];

/// Rank and size from the process environment; `None` when no launcher set any of them.
pub fn rank_from_env() -> Result<Option<RankInfo>, LaunchError> {
    rank_from(|k| std::env::var(k).ok())
}

/// Rank and size from any variable lookup (the tests pass a map).
pub fn rank_from(get: impl Fn(&str) -> Option<String>) -> Result<Option<RankInfo>, LaunchError> {
    for (rv, sv, launcher) in SOURCES {
        let (r, s) = (get(rv), get(sv));
        let (r, s) = match (r, s) {
            (None, None) => continue,
            (Some(_), None) => {
                return Err(LaunchError::EnvMissing {
                    present: rv,
                    missing: sv,
                })
            }
            (None, Some(_)) => {
                return Err(LaunchError::EnvMissing {
                    present: sv,
                    missing: rv,
                })
            }
            (Some(r), Some(s)) => (r, s),
        };
        let rank = number(rv, &r)?;
        let size = number(sv, &s)?;
        if size == 0 {
            return Err(LaunchError::Env {
                var: sv,
                value: s,
                why: "the size must be at least 1".into(),
            });
        }
        if rank >= size {
            return Err(LaunchError::RankOutOfRange {
                var: rv,
                rank,
                size,
            });
        }
        return Ok(Some(RankInfo {
            rank,
            size,
            launcher,
        }));
    }
    Ok(None)
}

fn number(var: &'static str, value: &str) -> Result<u32, LaunchError> {
    value.trim().parse::<u32>().map_err(|e| LaunchError::Env {
        var,
        value: value.to_string(),
        why: format!("not a non-negative integer ({e})"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(vars: &[(&str, &str)]) -> Result<Option<RankInfo>, LaunchError> {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        rank_from(|k| m.get(k).cloned())
    }

    #[test]
    fn each_launchers_variables_are_read() {
        for (rv, sv, launcher) in SOURCES {
            let got = with(&[(rv, "3"), (sv, "32")]).unwrap().unwrap();
            assert_eq!(
                got,
                RankInfo {
                    rank: 3,
                    size: 32,
                    launcher
                }
            );
        }
        assert_eq!(with(&[]).unwrap(), None);
    }

    #[test]
    fn mpirun_under_slurm_prefers_the_mpi_rank() {
        // mpirun inside an allocation: Slurm's variables describe the allocation, not the job.
        let got = with(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "1"),
            ("OMPI_COMM_WORLD_RANK", "5"),
            ("OMPI_COMM_WORLD_SIZE", "8"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            (got.rank, got.size, got.launcher),
            (5, 8, Launcher::OpenMpi)
        );
        // And our own variables beat everything (the local launcher sets them).
        let got = with(&[
            ("COFLOWKIT_RANK", "1"),
            ("COFLOWKIT_SIZE", "2"),
            ("PMI_RANK", "7"),
            ("PMI_SIZE", "9"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(got.launcher, Launcher::Coflowkit);
    }

    #[test]
    fn bad_values_say_which_variable_and_why() {
        let e = with(&[("PMI_RANK", "two"), ("PMI_SIZE", "4")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("PMI_RANK") && e.contains("two"), "{e}");
        let e = with(&[("SLURM_PROCID", "-1"), ("SLURM_NTASKS", "4")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("SLURM_PROCID"), "{e}");
        let e = with(&[("SLURM_PROCID", "4"), ("SLURM_NTASKS", "4")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("rank 4") && e.contains("size 4"), "{e}");
        let e = with(&[("COFLOWKIT_RANK", "0"), ("COFLOWKIT_SIZE", "0")])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("COFLOWKIT_SIZE") && e.contains("at least 1"),
            "{e}"
        );
        let e = with(&[("OMPI_COMM_WORLD_RANK", "1")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("OMPI_COMM_WORLD_SIZE"), "{e}");
        let e = with(&[("PMI_SIZE", "3")]).unwrap_err().to_string();
        assert!(e.contains("PMI_RANK"), "{e}");
        // Surrounding whitespace is tolerated, as shells and job scripts add it.
        assert_eq!(
            with(&[("PMI_RANK", " 1 "), ("PMI_SIZE", "2\n")])
                .unwrap()
                .unwrap()
                .rank,
            1
        );
    }
}
