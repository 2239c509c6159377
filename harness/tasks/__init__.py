"""The evaluation tasks: the project's catalog (catalog.py) with its lm-eval task YAML (configs/), the data some of
them generate (ruler.py), the `evaluation:` section of a matrix (plan.py) and whether a task name is known
(names.py), read when a matrix is validated."""
