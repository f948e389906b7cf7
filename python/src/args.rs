//! Python keywords to command-line flags: `queue_spacing=4` is `--queue-spacing=4`. The flags
//! are then parsed by the CLI's own clap structs, so defaults, checks and messages are the
//! CLI's.

use clap::{ArgAction, Command, FromArgMatches};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};

use crate::CoflowkitError;

/// One flag's value as the command line would spell it.
fn value_text(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if v.is_instance_of::<PyBool>() {
        return Ok(if v.extract::<bool>()? {
            "true"
        } else {
            "false"
        }
        .into());
    }
    if v.is_instance_of::<PyString>() {
        return v.extract();
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let parts: PyResult<Vec<String>> = v.try_iter()?.map(|x| value_text(&x?)).collect();
        return Ok(parts?.join(","));
    }
    Ok(v.str()?.to_string())
}

/// The flags of `cmd` that `kwargs` stand for. `None` leaves a flag at its default; a switch
/// (`--no-starvation`) is on for a true value and off for a false one.
pub fn argv(
    cmd: &Command,
    what: &str,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<String>> {
    let mut out = Vec::new();
    let Some(kwargs) = kwargs else {
        return Ok(out);
    };
    for (k, v) in kwargs.iter() {
        let key: String = k.extract()?;
        let long = key.replace('_', "-");
        let Some(arg) = cmd
            .get_arguments()
            .find(|a| a.get_long() == Some(long.as_str()))
        else {
            return Err(CoflowkitError::new_err(format!(
                "unknown option `{key}`: the options are the flags of `coflowkit {what} --help` \
                 with `_` for `-` (see {what}_flags())"
            )));
        };
        if v.is_none() {
            continue;
        }
        match arg.get_action() {
            ArgAction::SetTrue | ArgAction::SetFalse => {
                let on: bool = v.extract().map_err(|_| {
                    CoflowkitError::new_err(format!("`{key}`: a switch takes True or False"))
                })?;
                if on {
                    out.push(format!("--{long}"));
                }
            }
            _ => out.push(format!("--{long}={}", value_text(&v)?)),
        }
    }
    Ok(out)
}

/// Parse `argv` into the CLI struct `T`; clap's message (first line, `error: ` left off) on
/// failure.
pub fn parse<T: clap::Args + FromArgMatches>(cmd: Command, argv: &[String]) -> PyResult<T> {
    let matches = cmd
        .no_binary_name(true)
        .try_get_matches_from(argv)
        .map_err(clap_err)?;
    T::from_arg_matches(&matches).map_err(clap_err)
}

fn clap_err(e: clap::Error) -> PyErr {
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or("").trim();
    CoflowkitError::new_err(first.strip_prefix("error: ").unwrap_or(first).to_string())
}

/// A command holding `T`'s flags, named for messages.
pub fn command<T: clap::Args>(name: &'static str) -> Command {
    T::augment_args(Command::new(name))
}

/// Every flag of `cmd` as (python name, help), for discovery from Python.
pub fn flags(cmd: &Command) -> Vec<(String, String)> {
    cmd.get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?;
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            Some((long.replace('-', "_"), help))
        })
        .collect()
}
