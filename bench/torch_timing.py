"""Timing shared by the PyTorch peers of bench_encoders: one warm-up run, then runs until
`min_seconds` have passed and at least three were made, under inference_mode; the
median in ms and the number of runs."""
import time

import torch


def median_ms(run, min_seconds):
    with torch.inference_mode():
        run()
        times = []
        start = time.perf_counter()
        while time.perf_counter() - start < min_seconds or len(times) < 3:
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
    times.sort()
    return 1000 * times[len(times) // 2], len(times)
