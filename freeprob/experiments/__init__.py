"""Experiments: model configurations, distances between sampled and predicted spectra,
the result store, Dask sweeps, ``verify``, figures and the readout comparisons."""
