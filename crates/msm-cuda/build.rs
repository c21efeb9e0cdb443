fn main() {
    cuda_build::Kernels::new("msm_cuda_kernels")
        .source("cuda/msm.cu")
        .header("cuda/msm.h")
        .header("cuda/field_test_ops.cuh")
        .build();
}
