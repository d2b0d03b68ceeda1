"""Reading the files a user hands backendcheck (specs, the claim catalog,
expectation files, manifests, baselines, evidence): bounded reads of regular
files, TOML with line numbers, and the one error type, printed as
``FILE:LINE: message``. Both generators/ and reports/ use it; it imports
neither."""
