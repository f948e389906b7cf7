//! Compiles the control-plane protocol. protoc comes from the `protoc-bin-vendored` crate so a
//! fresh machine needs nothing installed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    std::env::set_var("PROTOC", protoc);
    println!("cargo:rerun-if-changed=proto/coflowkit_v1.proto");
    tonic_build::configure().compile_protos(&["proto/coflowkit_v1.proto"], &["proto"])?;
    Ok(())
}
