#!/usr/bin/env python3
"""How much memory does a model need, where does it go, and how does dfg's
plan compare with a caching allocator? For a torchvision model (default
resnet18), at a batch size (default 1):

    python3 examples/python/memory_question.py [MODEL] [BATCH]

Needs the dfg package (pip install .), torch and torchvision.
"""
import sys

import torch
import torchvision

import dfg


def mib(n):
    return f"{n / 2**20:8.2f} MiB"


def main(argv):
    name = argv[1] if len(argv) > 1 else "resnet18"
    batch = int(argv[2]) if len(argv) > 2 else 1
    model = getattr(torchvision.models, name)(weights=None)
    program = dfg.from_torch(model, torch.randn(batch, 3, 224, 224))
    compare = program.compare()
    caching = compare["caching_allocator"]
    print(f"{name}, batch {batch}")
    print(f"  weights                   {mib(program.weights_bytes)}")
    print(f"  arena (dfg's plan)        {mib(program.arena_bytes)}")
    print(f"  lower bound               {mib(program.lower_bound_bytes)}")
    print(f"  every tensor its own      {mib(program.no_reuse_bytes)}")
    print(f"  caching allocator reserves {mib(caching['reserved_peak_bytes'])}"
          f" for the same tensors in the same order")
    plan = program.plan
    largest = sorted((t for t in plan["tensors"] if t.get("region") == "arena"),
                     key=lambda t: -t["bytes"])[:5]
    print("  largest arena tensors:")
    for t in largest:
        print(f"    {t['name'][:48]:48s} {mib(t['bytes'])}")
    program.to_html(f"{name}-plan.html")
    print(f"  the plan's picture: {name}-plan.html")


if __name__ == "__main__":
    main(sys.argv)
