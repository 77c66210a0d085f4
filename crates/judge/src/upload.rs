//! An uploaded archive made judgeable where that takes running programs, which the App owner
//! (no sandbox) cannot do: a Polygon package is imported into the Kattis format (its
//! generators and main solution run in the sandbox), and a package without a time limit gets
//! the one `problem verify` derives from its accepted submissions, written as `.timelimit`.
//! Anything else is left as it is.

use std::path::Path;

use crate::judging::{Judge, JudgeError};
use crate::package::archive::{self, ArchiveLimits};
use crate::package::{PackageError, Problem};
use crate::polygon::{self, ImportError};

#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error(transparent)]
    Package(#[from] PackageError),
    #[error("Polygon import: {0}")]
    Import(#[from] ImportError),
    #[error("deriving the time limit: {0}")]
    Judge(#[from] JudgeError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What became of an upload.
#[derive(Debug)]
pub enum Preparation {
    /// Nothing to do: store the archive as it came.
    Unchanged,
    /// Store this archive instead; `notes` say what was done.
    Prepared {
        archive: Vec<u8>,
        notes: Vec<String>,
    },
}

/// Prepares an uploaded archive (a zip of a Kattis or a Polygon package).
pub fn prepare_upload(
    judge: &Judge<'_>,
    upload: &[u8],
    limits: ArchiveLimits,
) -> Result<Preparation, PrepareError> {
    let work = tempfile::Builder::new()
        .prefix("ulticode-upload-")
        .tempdir()?;
    let unpacked = work.path().join("unpacked");
    std::fs::create_dir(&unpacked)?;
    archive::unpack(upload, &unpacked, limits)?;
    let mut notes = Vec::new();
    let (root, mut changed) = match archive::package_root(&unpacked) {
        Ok(root) => (root, false),
        Err(not_kattis) => match polygon::find_problem_xml(&unpacked) {
            Ok(polygon_root) => {
                let target = work.path().join("imported");
                let report = polygon::import(judge, &polygon_root, &target)?;
                notes.push(format!(
                    "imported from Polygon: {} tests ({} inputs generated, {} answers from the main solution)",
                    report.tests, report.generated_inputs, report.generated_answers
                ));
                notes.extend(report.notes);
                (target, true)
            }
            Err(_) => return Err(not_kattis.into()),
        },
    };
    let problem = Problem::load(&root)?;
    if !problem.time_limit_fixed && !problem.submit_answer {
        let ms = crate::verify::derived_time_limit(judge, &problem)?;
        write_time_limit(&root, ms)?;
        notes.push(format!("time limit {ms} ms, derived from its submissions"));
        changed = true;
    }
    if !changed {
        return Ok(Preparation::Unchanged);
    }
    Ok(Preparation::Prepared {
        archive: archive::pack(&root)?,
        notes,
    })
}

/// `.timelimit` (seconds), which the loader reads when `problem.yaml` gives no time limit.
fn write_time_limit(root: &Path, ms: u64) -> std::io::Result<()> {
    std::fs::write(root.join(".timelimit"), format!("{}\n", ms as f64 / 1000.0))
}
