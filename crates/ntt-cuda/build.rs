fn main() {
    cuda_build::Kernels::new("ntt_cuda_kernels")
        .source("cuda/ntt.cu")
        .header("cuda/ntt.h")
        .header("cuda/fr_test_ops.cuh")
        .header("cuda/ntt_pass.cuh")
        .build();
}
