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
# cuDNN's calls, whole searches of many plans: up to a few minutes each.
# Those that time the device, or whose choices come from timings (a
# benchmark search's winner, its plans' logged times), run alone
# (RUN_SERIAL); those that count searches, plans and notes run beside
# others (ci/kit_steps.py runs them together, as ctest -j does), their work
# mostly the host's: building plans and writing cuDNN's log.
set_tests_properties([==[TorchPython.CudnnBenchmarkKeepsTheFastestPlanItTimed]==]
  [==[TorchPython.CudnnBenchmarkChoicesAcrossProcesses]==]
  [==[TorchPython.CudnnDeterministicBenchmarkChoicesAcrossProcesses]==]
  [==[TorchPython.CudnnBenchmarkSpeedWithFixedShapes]==] [==[TorchPython.CudnnBenchmarkCostWithChangingShapes]==]
  [==[TorchPython.CudnnDeterministicSpeed]==] [==[TorchPython.CudnnDisabledTrainingSpeedF32]==]
  [==[TorchPython.CudnnDisabledTrainingSpeedF16]==] [==[TorchPython.Tf32ConvolutionSpeed]==]
  [==[TorchPython.Tf32MatmulSpeed]==] PROPERTIES LABELS "pytorch;gpu" TIMEOUT 600 RUN_SERIAL TRUE)
set_tests_properties([==[TorchPython.CudnnBenchmarkSearchesOncePerKey]==]
  [==[TorchPython.CudnnBenchmarkLimitBoundsTheSearch]==] [==[TorchPython.CudnnHeuristicChoicesAcrossProcesses]==]
  [==[TorchPython.CudnnDeterministicBenchmarkStillSearches]==]
  [==[TorchPython.CudnnDeterministicBenchmarkRunsOnlyDeterministicPlans]==]
  [==[TorchPython.DeterministicAlgorithmsRunOnlyDeterministicCudnnPlans]==]
  PROPERTIES LABELS "pytorch;gpu" TIMEOUT 600)

# The questions users bring to a GPU (suites/probes/cuda_questions.py and
# compiled.py's CUDA plans): in the GPU tier. The costs time the device:
# alone. The bits of attention and of the precision settings run beside
# others, in one interpreter that answers each of them in turn
# (cuda_questions.SHARED_CHILD, where the kit names a place for it: torch's
# import and CUDA's start paid once): one lock, as that interpreter answers
# one at a time. torch.compile compiles two checks at a time: 2 processors.
set_tests_properties([==[TorchPython.CudaBatchInvariance]==] [==[TorchPython.CudaPrecisionSettings]==]
  [==[TorchPython.CudaDeterministicAlgorithmsTrainingCost]==]
  PROPERTIES LABELS "pytorch;gpu" TIMEOUT 600 RUN_SERIAL TRUE)
set_tests_properties([==[TorchPython.CudaSdpaRepeatsItsBits]==] [==[TorchPython.CudaSdpaUnderDeterministicAlgorithms]==]
  [==[TorchPython.CudaSdpaFollowsTheDocumentedTable]==] [==[TorchPython.CudaTf32ReducesPrecision]==]
  [==[TorchPython.CudaHighestPrecisionConvolution]==]
  PROPERTIES LABELS "pytorch;gpu" TIMEOUT 600 RESOURCE_LOCK cuda-questions-child)
set_tests_properties([==[TorchPython.TorchCompileOnCudaAgainstEager]==] [==[TorchPython.TorchCompileOnCudaDeterministic]==]
  PROPERTIES LABELS "pytorch;gpu" TIMEOUT 600 PROCESSORS 2)
