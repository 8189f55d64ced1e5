from advisor.bench.preload import llama_before_numpy

llama_before_numpy()  # before the child's imports load numpy (advisor/bench/preload.py)

from advisor.bench.child import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
