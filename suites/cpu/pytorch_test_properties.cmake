# The probes whose claims PyTorch decides on a CUDA device (cublas-config,
# the CUDA entries of use_deterministic_algorithms's documented list) are in
# the GPU tier too: ci/gpu-kit runs -L gpu. Without a CUDA device, the cuBLAS
# probe is not evaluated with its reason and the list judges its CPU entries.
# A test labelled for both devices counts for neither in --require DEVICE.
set_tests_properties([==[TorchPython.CublasNeedsItsWorkspaceConfigUnderDeterministicAlgorithms]==]
  [==[TorchPython.DocumentedDeterminismList]==] PROPERTIES LABELS "pytorch;gpu")

# torch.compile's checks run two processes at a time (suites/probes/compiled.py).
set_tests_properties([==[TorchPython.TorchCompileOnTheCpu]==] PROPERTIES PROCESSORS 2)
