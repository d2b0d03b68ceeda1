TEST(TorchPython, BuildConfiguration) { RunTorchProbe("build_config"); }
TEST(TorchPython, DefaultsAreTheDocumentedOnes) { RunTorchProbe("defaults"); }
TEST(TorchPython, CudnnFlagsScopeSetsAndRestores) { RunTorchProbe("flags_scope"); }
TEST(TorchPython, DeterministicAlgorithmsRaisePyTorchsAlert) { RunTorchProbe("alert"); }
TEST(TorchPython, WarnOnlyWarnsAndRuns) { RunTorchProbe("warn_only"); }
TEST(TorchPython, CudnnDeterministicDoesNotReachCpuOperations) { RunTorchProbe("cudnn_deterministic_scope"); }
TEST(TorchPython, MkldnnIsAvailableReportsTheBuild) { RunTorchProbe("mkldnn_available"); }
TEST(TorchPython, OpenmpIsAvailable) { RunTorchProbe("openmp_available"); }
TEST(TorchPython, MpsIsNeitherBuiltNorAvailableOffApple) { RunTorchProbe("mps_available"); }
TEST(TorchPython, ManualSeedIsNotABackendFlag) { RunTorchProbe("seed_not_backends"); }
// use_deterministic_algorithms's own list, entry by entry (suites/probes/documented.py).
TEST(TorchPython, DocumentedDeterminismList) { RunTorchProbe("documented"); }
// Invariance level by level (suites/probes/invariance.py), judged by reports/invariance.py.
TEST(TorchPython, InvarianceGrid) { RunTorchProbe("invariance"); }
// Determinism over PyTorch's own OpInfo table (suites/probes/census.py): a few
// samples per operation in the ci tier, every sample in the nightly tier
// (the build's BACKENDCHECK_TIER, passed to the probe).
TEST(TorchPython, OpInfoCensus) {
  setenv("BACKENDCHECK_TIER", BC_TIER, 1);
  RunTorchProbe("census");
}
// torch.compile on the CPU against eager (suites/probes/compiled.py); the
// nightly tier adds Inductor's own determinism settings.
TEST(TorchPython, TorchCompileOnTheCpu) {
  setenv("BACKENDCHECK_TIER", BC_TIER, 1);
  RunTorchProbe("compiled");
}
// Per version: not evaluated, naming the version, where it lacks the setting.
TEST(TorchPython, MkldnnDeterministicFlagSetsAndRestores) { RunTorchProbe("mkldnn_deterministic"); }
TEST(TorchPython, Fp32PrecisionAndAllowTf32DoNotMix) { RunTorchProbe("fp32_precision"); }
// The cuBLAS rule decided by PyTorch itself (not evaluated without a CUDA device).
TEST(TorchPython, CublasNeedsItsWorkspaceConfigUnderDeterministicAlgorithms) { RunTorchProbe("cublas_config"); }

// The 2.x settings (suites/probes/settings.py): the fp32_precision tree and
// its legacy spellings, set_float32_matmul_precision on the CPU, oneDNN's
// bf16 precision, the MHA fast path, SDPA's switches and CPU backends, the
// CPU capability and opt_einsum.
TEST(TorchPython, Fp32PrecisionChildrenInheritTheirParent) { RunTorchProbe("fp32_precision_inherit"); }
TEST(TorchPython, Fp32PrecisionLegacySwitchesWriteTheSettings) { RunTorchProbe("fp32_precision_legacy"); }
TEST(TorchPython, Fp32PrecisionRefusesUnknownPrecisions) { RunTorchProbe("fp32_precision_refuses"); }
TEST(TorchPython, MatmulPrecisionMediumOnTheCpu) { RunTorchProbe("matmul_precision_medium"); }
TEST(TorchPython, MatmulPrecisionHighOnTheCpu) { RunTorchProbe("matmul_precision_high"); }
TEST(TorchPython, MatmulPrecisionKeepsDtypeAndConvolution) { RunTorchProbe("matmul_precision_keeps_dtype_and_conv"); }
TEST(TorchPython, MatmulPrecisionAffectsCudaOnly) { RunTorchProbe("matmul_precision_cuda_only"); }
TEST(TorchPython, MkldnnMatmulBf16Precision) { RunTorchProbe("mkldnn_matmul_bf16"); }
TEST(TorchPython, MkldnnConvBf16Precision) { RunTorchProbe("mkldnn_conv_bf16"); }
TEST(TorchPython, MkldnnRnnBf16Precision) { RunTorchProbe("mkldnn_rnn_bf16"); }
TEST(TorchPython, MkldnnTf32Precision) { RunTorchProbe("mkldnn_tf32"); }
TEST(TorchPython, MhaFastPathCanBeDisabled) { RunTorchProbe("mha_fastpath"); }
TEST(TorchPython, SdpaBackendSwitchesSetAndRestore) { RunTorchProbe("sdpa_switches"); }
TEST(TorchPython, SdpaCpuBackendsSideBySide) { RunTorchProbe("sdpa_cpu_backends"); }
TEST(TorchPython, CpuCapabilityFollowsAtenCpuCapability) { RunTorchProbe("cpu_capability"); }
TEST(TorchPython, OptEinsumSettings) { RunTorchProbe("opt_einsum"); }
TEST(TorchPython, VerboseModesPrintInsideTheirBlockOnly) { RunTorchProbe("verbose_scopes"); }
TEST(TorchPython, CudaMatmulReducedPrecisionSwitches) { RunTorchProbe("cuda_matmul_reduced_precision"); }

// What PyTorch does when it calls cuDNN (suites/probes/cudnn_choices.py), on
// a CUDA device: its own calls, seen in cuDNN's API log of a fresh child
// interpreter (read by bc_cudnn_log), and its speed and memory, timed in two
// worker interpreters as paired reps (Compare records). Without a CUDA
// device each is not evaluated, naming its probe.
TEST(TorchPython, CudnnBenchmarkKeepsTheFastestPlanItTimed) { RunTorchProbe("cudnn_bench_fastest"); }
TEST(TorchPython, CudnnBenchmarkSearchesOncePerKey) { RunTorchProbe("cudnn_bench_cache"); }
TEST(TorchPython, CudnnBenchmarkLimitBoundsTheSearch) { RunTorchProbe("cudnn_bench_limit"); }
TEST(TorchPython, CudnnBenchmarkChoicesAcrossProcesses) { RunTorchProbe("cudnn_bench_processes"); }
TEST(TorchPython, CudnnHeuristicChoicesAcrossProcesses) { RunTorchProbe("cudnn_heuristic_processes"); }
TEST(TorchPython, CudnnDeterministicBenchmarkStillSearches) { RunTorchProbe("cudnn_det_bench_search"); }
TEST(TorchPython, CudnnDeterministicBenchmarkRunsOnlyDeterministicPlans) { RunTorchProbe("cudnn_det_bench_plans"); }
TEST(TorchPython, CudnnDeterministicBenchmarkChoicesAcrossProcesses) { RunTorchProbe("cudnn_det_bench_processes"); }
TEST(TorchPython, DeterministicAlgorithmsRunOnlyDeterministicCudnnPlans) { RunTorchProbe("cudnn_det_algorithms_plans"); }
TEST(TorchPython, CudnnBenchmarkSpeedWithFixedShapes) { RunTorchProbe("cudnn_bench_fixed"); }
TEST(TorchPython, CudnnBenchmarkCostWithChangingShapes) { RunTorchProbe("cudnn_bench_varying"); }
TEST(TorchPython, CudnnDeterministicSpeed) { RunTorchProbe("cudnn_det_speed"); }
TEST(TorchPython, CudnnDisabledTrainingSpeedF32) { RunTorchProbe("cudnn_disabled_f32"); }
TEST(TorchPython, CudnnDisabledTrainingSpeedF16) { RunTorchProbe("cudnn_disabled_f16"); }
TEST(TorchPython, Tf32ConvolutionSpeed) { RunTorchProbe("tf32_conv_speed"); }
TEST(TorchPython, Tf32MatmulSpeed) { RunTorchProbe("tf32_matmul_speed"); }

// The questions users bring to a GPU (suites/probes/cuda_questions.py, and
// compiled.py's CUDA plans), decided by PyTorch on a CUDA device: attention's
// backends, batch invariance with its levers, the precision settings, the
// deterministic mode's cost, torch.compile. Not evaluated without one.
TEST(TorchPython, CudaSdpaRepeatsItsBits) { RunTorchProbe("cuda_sdpa_repeatable"); }
TEST(TorchPython, CudaSdpaUnderDeterministicAlgorithms) { RunTorchProbe("cuda_sdpa_deterministic"); }
TEST(TorchPython, CudaSdpaFollowsTheDocumentedTable) { RunTorchProbe("cuda_sdpa_table"); }
TEST(TorchPython, CudaBatchInvariance) { RunTorchProbe("cuda_invariance"); }
TEST(TorchPython, CudaPrecisionSettings) { RunTorchProbe("cuda_precision_settings"); }
TEST(TorchPython, CudaTf32ReducesPrecision) { RunTorchProbe("cuda_tf32_precision"); }
TEST(TorchPython, CudaHighestPrecisionConvolution) { RunTorchProbe("cuda_highest_conv"); }
TEST(TorchPython, CudaDeterministicAlgorithmsTrainingCost) { RunTorchProbe("cuda_det_alg_speed"); }
TEST(TorchPython, TorchCompileOnCudaAgainstEager) { RunTorchProbe("compiled_cuda_eager"); }
TEST(TorchPython, TorchCompileOnCudaDeterministic) { RunTorchProbe("compiled_cuda_deterministic"); }
