"""The run layer: tasks, data loading, presets, the run's configuration, plan and execution."""
