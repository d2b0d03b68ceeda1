# The probes whose claims PyTorch decides on a CUDA device (cublas-config,
# the CUDA entries of use_deterministic_algorithms's documented list) are in
# the GPU tier too: ci/gpu-kit runs -L gpu. Without a CUDA device, the cuBLAS
# probe is not evaluated with its reason and the list judges its CPU entries.
# A test labelled for both devices counts for neither in --require DEVICE.
set_tests_properties([==[TorchPython.CublasNeedsItsWorkspaceConfigUnderDeterministicAlgorithms]==]
  [==[TorchPython.DocumentedDeterminismList]==] PROPERTIES LABELS "pytorch;gpu")

# torch.compile's checks run two processes at a time (suites/probes/compiled.py).
set_tests_properties([==[TorchPython.TorchCompileOnTheCpu]==] PROPERTIES PROCESSORS 2)

# What PyTorch does when it calls cuDNN (suites/probes/cudnn_choices.py):
# decided on a CUDA device, in the GPU tier. Their child interpreters log
# cuDNN's calls, whole searches of many plans: up to a few minutes each. The
# comparisons time the device as evidence: alone, as the GPU tests run.
set_tests_properties([==[TorchPython.CudnnBenchmarkKeepsTheFastestPlanItTimed]==]
  [==[TorchPython.CudnnBenchmarkSearchesOncePerKey]==] [==[TorchPython.CudnnBenchmarkLimitBoundsTheSearch]==]
  [==[TorchPython.CudnnBenchmarkChoicesAcrossProcesses]==] [==[TorchPython.CudnnHeuristicChoicesAcrossProcesses]==]
  [==[TorchPython.CudnnDeterministicBenchmarkStillSearches]==]
  [==[TorchPython.CudnnDeterministicBenchmarkRunsOnlyDeterministicPlans]==]
  [==[TorchPython.CudnnDeterministicBenchmarkChoicesAcrossProcesses]==]
  [==[TorchPython.DeterministicAlgorithmsRunOnlyDeterministicCudnnPlans]==]
  [==[TorchPython.CudnnBenchmarkSpeedWithFixedShapes]==] [==[TorchPython.CudnnBenchmarkCostWithChangingShapes]==]
  [==[TorchPython.CudnnDeterministicSpeed]==] [==[TorchPython.CudnnDisabledTrainingSpeedF32]==]
  [==[TorchPython.CudnnDisabledTrainingSpeedF16]==] [==[TorchPython.Tf32ConvolutionSpeed]==]
  [==[TorchPython.Tf32MatmulSpeed]==] PROPERTIES LABELS "pytorch;gpu" TIMEOUT 600 RUN_SERIAL TRUE)

# The questions users bring to a GPU (suites/probes/cuda_questions.py and
# compiled.py's CUDA plans): in the GPU tier; the costs time the device, and
# torch.compile compiles two checks at a time.
set_tests_properties([==[TorchPython.CudaSdpaRepeatsItsBits]==] [==[TorchPython.CudaSdpaUnderDeterministicAlgorithms]==]
  [==[TorchPython.CudaSdpaFollowsTheDocumentedTable]==] [==[TorchPython.CudaBatchInvariance]==]
  [==[TorchPython.CudaPrecisionSettings]==] [==[TorchPython.CudaTf32ReducesPrecision]==]
  [==[TorchPython.CudaHighestPrecisionConvolution]==] [==[TorchPython.CudaDeterministicAlgorithmsTrainingCost]==]
  [==[TorchPython.TorchCompileOnCudaAgainstEager]==] [==[TorchPython.TorchCompileOnCudaDeterministic]==]
  PROPERTIES LABELS "pytorch;gpu" TIMEOUT 600 RUN_SERIAL TRUE)
