"""What a torch install says of itself, the way PyTorch's C++ extensions ask
it: run with the interpreter that imports that torch, it prints one
`key=value` line each for cmake/Dependencies.cmake and ./backendcheck.

  prefix    torch.utils.cmake_prefix_path (holds Torch/TorchConfig.cmake)
  version   torch.__version__ without its local part (2.15.0, 1.13.1)
  local     the local part (cu132, cpu), empty for Debian's build
  cuda      torch.version.cuda, empty for a CPU build
  cudnn     the cuDNN version the build was made with (92600), empty without
  abi       1 when libtorch uses the C++11 std::string ABI, else 0
  nvidia    the site-packages/nvidia folder of the wheel's CUDA libraries, if any
  onednn    the version of the oneDNN this torch runs (3.13.3, 2.6.3), empty without
  python    this interpreter

Exit 3 when torch cannot be imported, with the error on stderr.
"""

from __future__ import annotations

import os
import re
import sys


def main() -> int:
    try:
        import torch
        import torch.utils
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch here"
        print(f"{sys.executable}: cannot import torch: {type(e).__name__}: {e}", file=sys.stderr)
        return 3
    version, _, local = torch.__version__.partition("+")
    cuda = torch.version.cuda or ""
    cudnn = ""
    if cuda:
        try:
            cudnn = str(torch._C._cudnn.getCompileVersion()) if hasattr(torch._C, "_cudnn") else ""
        except Exception:  # noqa: BLE001 - a build without cuDNN
            cudnn = ""
        if isinstance(cudnn, str) and cudnn.startswith("("):  # (9, 26, 0)
            major, minor, patch = (int(x) for x in cudnn.strip("()").split(","))
            cudnn = str(major * 10000 + minor * 100 + patch)
    site = os.path.dirname(os.path.dirname(torch.__file__))
    nvidia = os.path.join(site, "nvidia")
    print(f"prefix={torch.utils.cmake_prefix_path}")
    print(f"version={version}")
    print(f"local={local}")
    print(f"cuda={cuda}")
    print(f"cudnn={cudnn}")
    print(f"abi={int(bool(torch._C._GLIBCXX_USE_CXX11_ABI))}")
    print(f"nvidia={nvidia if os.path.isdir(nvidia) else ''}")
    print(f"python={sys.executable}")
    onednn = re.search(r"MKL-DNN v(\d+\.\d+(?:\.\d+)?)", torch.__config__.show())
    print(f"onednn={onednn.group(1) if onednn else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
