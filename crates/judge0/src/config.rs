//! The server's settings, as Judge0 1.13.1's `/config_info` reports them (its 39 keys, in its
//! order), plus the authentication tokens.

use serde_json::json;

use crate::ordered::Object;

/// Judge0's limits and switches, with this server's values.
#[derive(Debug, Clone)]
pub struct Judge0Config {
    pub enable_wait_result: bool,
    pub enable_compiler_options: bool,
    pub enable_command_line_arguments: bool,
    pub enable_submission_delete: bool,
    pub enable_callbacks: bool,
    pub callbacks_max_tries: u32,
    pub callbacks_timeout_s: f64,
    pub enable_additional_files: bool,
    pub max_queue_size: u64,
    pub cpu_time_limit: f64,
    pub max_cpu_time_limit: f64,
    pub cpu_extra_time: f64,
    pub max_cpu_extra_time: f64,
    pub wall_time_limit: f64,
    pub max_wall_time_limit: f64,
    pub memory_limit: u64,
    pub max_memory_limit: u64,
    pub stack_limit: u64,
    pub max_stack_limit: u64,
    pub max_processes_and_or_threads: u64,
    pub max_max_processes_and_or_threads: u64,
    pub max_file_size: u64,
    pub max_max_file_size: u64,
    pub number_of_runs: u64,
    pub max_number_of_runs: u64,
    pub max_extract_size: u64,
    pub enable_batched_submissions: bool,
    pub max_submission_batch_size: usize,
    /// `X-Auth-Token` values that authenticate (none: authentication is off).
    pub authn_tokens: Vec<String>,
    /// `X-Auth-User` values that authorize listing and deleting (none: never authorized).
    pub authz_tokens: Vec<String>,
}

impl Default for Judge0Config {
    /// Judge0 1.13.1's defaults, except what this server does differently: deleting is
    /// allowed (behind the authorization token), the per-process limits and the network can
    /// never be enabled (the sandbox limits the whole process tree and has no network).
    fn default() -> Self {
        Self {
            enable_wait_result: true,
            enable_compiler_options: true,
            enable_command_line_arguments: true,
            enable_submission_delete: true,
            enable_callbacks: true,
            callbacks_max_tries: 3,
            callbacks_timeout_s: 5.0,
            enable_additional_files: true,
            max_queue_size: 1_000,
            cpu_time_limit: 5.0,
            max_cpu_time_limit: 15.0,
            cpu_extra_time: 1.0,
            max_cpu_extra_time: 5.0,
            wall_time_limit: 10.0,
            max_wall_time_limit: 20.0,
            memory_limit: 128_000,
            max_memory_limit: 512_000,
            stack_limit: 64_000,
            max_stack_limit: 128_000,
            max_processes_and_or_threads: 60,
            max_max_processes_and_or_threads: 120,
            max_file_size: 1_024,
            max_max_file_size: 4_096,
            number_of_runs: 1,
            max_number_of_runs: 20,
            max_extract_size: 10_240,
            enable_batched_submissions: true,
            max_submission_batch_size: 20,
            authn_tokens: Vec::new(),
            authz_tokens: Vec::new(),
        }
    }
}

impl Judge0Config {
    /// `GET /config_info`: the 39 keys of 1.13.1, in its order.
    pub fn config_info(&self) -> Object {
        crate::ordered::object([
            ("maintenance_mode", json!(false)),
            ("enable_wait_result", json!(self.enable_wait_result)),
            (
                "enable_compiler_options",
                json!(self.enable_compiler_options),
            ),
            ("allowed_languages_for_compile_options", json!([])),
            (
                "enable_command_line_arguments",
                json!(self.enable_command_line_arguments),
            ),
            (
                "enable_submission_delete",
                json!(self.enable_submission_delete),
            ),
            ("enable_callbacks", json!(self.enable_callbacks)),
            ("callbacks_max_tries", json!(self.callbacks_max_tries)),
            ("callbacks_timeout", json!(self.callbacks_timeout_s)),
            (
                "enable_additional_files",
                json!(self.enable_additional_files),
            ),
            ("max_queue_size", json!(self.max_queue_size)),
            ("cpu_time_limit", json!(self.cpu_time_limit)),
            ("max_cpu_time_limit", json!(self.max_cpu_time_limit)),
            ("cpu_extra_time", json!(self.cpu_extra_time)),
            ("max_cpu_extra_time", json!(self.max_cpu_extra_time)),
            ("wall_time_limit", json!(self.wall_time_limit)),
            ("max_wall_time_limit", json!(self.max_wall_time_limit)),
            ("memory_limit", json!(self.memory_limit)),
            ("max_memory_limit", json!(self.max_memory_limit)),
            ("stack_limit", json!(self.stack_limit)),
            ("max_stack_limit", json!(self.max_stack_limit)),
            (
                "max_processes_and_or_threads",
                json!(self.max_processes_and_or_threads),
            ),
            (
                "max_max_processes_and_or_threads",
                json!(self.max_max_processes_and_or_threads),
            ),
            ("enable_per_process_and_thread_time_limit", json!(false)),
            (
                "allow_enable_per_process_and_thread_time_limit",
                json!(false),
            ),
            ("enable_per_process_and_thread_memory_limit", json!(false)),
            (
                "allow_enable_per_process_and_thread_memory_limit",
                json!(false),
            ),
            ("max_file_size", json!(self.max_file_size)),
            ("max_max_file_size", json!(self.max_max_file_size)),
            ("number_of_runs", json!(self.number_of_runs)),
            ("max_number_of_runs", json!(self.max_number_of_runs)),
            ("redirect_stderr_to_stdout", json!(false)),
            ("max_extract_size", json!(self.max_extract_size)),
            (
                "enable_batched_submissions",
                json!(self.enable_batched_submissions),
            ),
            (
                "max_submission_batch_size",
                json!(self.max_submission_batch_size),
            ),
            ("submission_cache_duration", json!(0.0)),
            ("use_docs_as_homepage", json!(false)),
            ("allow_enable_network", json!(false)),
            ("enable_network", json!(false)),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_info_has_the_39_keys_of_1_13_1() {
        let text = Judge0Config::default().config_info().render();
        let info: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(info.as_object().unwrap().len(), 39);
        // Written in Judge0's order (the object's own key order is a sorted map's).
        assert!(
            text.starts_with("{\"maintenance_mode\":false,\"enable_wait_result\":true,"),
            "{text}"
        );
        assert!(
            text.ends_with("\"allow_enable_network\":false,\"enable_network\":false}"),
            "{text}"
        );
        assert_eq!(info["cpu_time_limit"], json!(5.0));
        assert_eq!(info["memory_limit"], json!(128000));
    }
}
