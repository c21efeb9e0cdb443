//! Generates the prost messages and tonic service from the .proto files with protox (a protobuf compiler in Rust),
//! so building needs no protoc.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/cuzk/v1/proving.proto",
        "proto/cuzk/journal/v1/journal.proto",
    ];
    for f in &files {
        println!("cargo:rerun-if-changed={f}");
    }
    let descriptors = protox::compile(files, ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(descriptors)?;
    Ok(())
}
