//! The generated protocol types and services (`proto/coflowkit_v1.proto`).
#![allow(clippy::all, missing_docs)]

tonic::include_proto!("coflowkit.v1");
