"""The experiment trackers `vramlab export` writes to, each by the name of its library, of its pip extra
(vramlab[mlflow], ...) and of `--to`: named down here so that the command line lists them without loading their
writers (harness/report/export/)."""

TRACKERS = ("mlflow", "tensorboard", "wandb")
