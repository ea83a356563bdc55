"""What a day of the delivery report costs on EMR Serverless, from the CPU it used per record.

EMR Serverless bills each worker's vCPU and memory for every second it runs (one minute at
least), whether its cores are busy or not. A run therefore pays for the CPU seconds its tasks
use divided by how busy the cores were kept, on workers whose memory comes in a fixed ratio
to their vCPUs, plus the driver's worker for as long as the run lasts. The benchmark measures
the CPU seconds per record and the share of the cores the job kept busy; this module turns
them into vCPU-hours, GB-hours and dollars for a day of deliveries.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

PRICES_SOURCE = (
    "AWS price list for Amazon EMR Serverless, US East (N. Virginia), ARM64 (Graviton), as "
    "published in 2023-2025 and copied here on 2026-11-24 without network access: check "
    "https://aws.amazon.com/emr/pricing/ before budgeting"
)
VCPU_HOUR_USD = 0.042094
"""Per vCPU-hour, ARM64: the architecture ``DeliveryReportJob`` deploys."""
GB_HOUR_USD = 0.004628
"""Per GB-hour of memory, ARM64."""
WORKER_VCPUS = 4
WORKER_MEMORY_GB = 16
"""EMR Serverless' default Spark worker (driver and executors alike), which the job keeps:
4 vCPU and 16 GB, the 4 GB per vCPU ``DeliveryReportJob``'s capacity cap assumes. The
default 20 GB of disk per worker is free and enough for the job's shuffle."""
MINIMUM_BILLED_S = 60
"""Each worker is billed for at least a minute."""
DELIVERIES_PER_DAY = (1_000_000, 10_000_000, 100_000_000)


@dataclass(frozen=True)
class DailyCost:
    """One day of deliveries analysed by one run of the job."""

    deliveries: int
    executor_vcpu_hours: float
    driver_vcpu_hours: float
    memory_gb_hours: float
    usd: float


def daily_cost(
    deliveries: int,
    cpu_s_per_record: float,
    busy_share: float,
    executor_vcpus: int,
) -> DailyCost:
    """The cost of analysing ``deliveries`` records in one run.

    ``busy_share`` is the share of the allocated cores the job kept busy (CPU seconds over
    wall seconds times cores, as measured); ``executor_vcpus`` the executors' vCPUs (the
    application's cap less the driver's worker). Executors are billed for their CPU seconds
    over ``busy_share``; the driver's worker for as long as the executors take.
    """
    if not 0 < busy_share <= 1:
        raise ValueError(f"busy_share is {busy_share}; it must be in (0, 1]")
    executor_vcpu_s = max(
        deliveries * cpu_s_per_record / busy_share, MINIMUM_BILLED_S * WORKER_VCPUS
    )
    run_s = max(executor_vcpu_s / executor_vcpus, MINIMUM_BILLED_S)
    driver_vcpu_s = run_s * WORKER_VCPUS
    vcpu_hours = (executor_vcpu_s + driver_vcpu_s) / 3600
    memory_gb_hours = vcpu_hours * WORKER_MEMORY_GB / WORKER_VCPUS
    return DailyCost(
        deliveries=deliveries,
        executor_vcpu_hours=round(executor_vcpu_s / 3600, 4),
        driver_vcpu_hours=round(driver_vcpu_s / 3600, 4),
        memory_gb_hours=round(memory_gb_hours, 3),
        usd=round(vcpu_hours * VCPU_HOUR_USD + memory_gb_hours * GB_HOUR_USD, 4),
    )


def cost_table(cpu_s_per_record: float, busy_share: float, max_vcpus: int) -> dict[str, Any]:
    """Daily costs at 1, 10 and 100 million deliveries, with the prices and settings used."""
    executor_vcpus = max(
        WORKER_VCPUS, math.floor((max_vcpus - WORKER_VCPUS) / WORKER_VCPUS) * WORKER_VCPUS
    )
    return {
        "prices": {
            "vcpu_hour_usd": VCPU_HOUR_USD,
            "gb_hour_usd": GB_HOUR_USD,
            "source": PRICES_SOURCE,
        },
        "workers": {
            "vcpus": WORKER_VCPUS,
            "memory_gb": WORKER_MEMORY_GB,
            "executor_vcpus": executor_vcpus,
        },
        "cpu_us_per_record": round(cpu_s_per_record * 1e6, 2),
        "busy_share": round(busy_share, 3),
        "per_day": [
            asdict(daily_cost(n, cpu_s_per_record, busy_share, executor_vcpus))
            for n in DELIVERIES_PER_DAY
        ],
    }
