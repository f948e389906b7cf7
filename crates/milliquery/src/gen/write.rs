//! Cutting one stream of rows into tablets.

use std::path::{Path, PathBuf};

use crate::tablet::Table;
use crate::QueryError;

pub fn tablets(
    dir: &Path,
    table: Table,
    ranks: usize,
    rows_per_rank: usize,
    mut rows: impl Iterator<Item = Vec<String>>,
) -> Result<Vec<PathBuf>, QueryError> {
    let sub = dir.join(table.dir());
    std::fs::create_dir_all(&sub).map_err(|source| QueryError::Io {
        path: sub.clone(),
        source,
    })?;
    // Grown as files are written: `ranks` is not trusted to size an allocation.
    let mut files = Vec::new();
    for rank in 0..ranks {
        let path = table.path(dir, rank);
        let io = |e: csv::Error| QueryError::Io {
            path: path.clone(),
            source: std::io::Error::other(e.to_string()),
        };
        let mut w = csv::Writer::from_path(&path).map_err(io)?;
        w.write_record(table.header()).map_err(io)?;
        for _ in 0..rows_per_rank {
            let row = rows.next().ok_or_else(|| {
                QueryError::BadArgument(format!("the {} generator ran dry", table.dir()))
            })?;
            w.write_record(&row).map_err(io)?;
        }
        w.flush().map_err(|source| QueryError::Io {
            path: path.clone(),
            source,
        })?;
        files.push(path);
    }
    Ok(files)
}
