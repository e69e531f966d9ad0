//! Where the build put this test binary, and so the `consular` binary and the tools the
//! harness keeps beside it.

use std::path::PathBuf;

/// The target directory (`target/`) this test binary was built into, from its path
/// `target/<profile>/deps/<binary>`.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors().nth(3).expect("target/<profile>/deps/<binary>").to_path_buf()
}
