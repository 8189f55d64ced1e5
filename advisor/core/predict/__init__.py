"""Prediction: physical ceilings, the speed model fitted on published results, projections onto
catalogued devices, upgrade verdicts, workloads and the curves the charts draw."""
