"""The model in use and what replaces it, free of rclpy: the parameters' typed record, the model
a description and they make (:mod:`ik_node.decisions.planning`), its solver once built, and the inputs
that change the solver besides the parameters: the SRDF and the obstacles from topics.

Readiness: a description is planned in milliseconds, so the node shows the robot at once; the
solver is attached when built (:meth:`ModelState.attach_solver`). A run-time parameter change is
validated whole (:meth:`ModelState.candidate`: the settings and a new model, its solver built when
the kernels are ready) before :meth:`ModelState.apply` installs it; a refusal is an
:class:`~ik_node.errors.IKNodeError` naming the parameter, the model in use staying.

Collisions (issue 18): the solver checks self-collision when ``self_collision`` (the link pairs
of the SRDF, :attr:`ModelState.semantic_description`: the ``robot_description_semantic``
parameter, else the topic's latest) and the obstacles always: the parameters' (``obstacle_names``)
and the topic's (:attr:`ModelState.topic_obstacles`, replaced between solves without a rebuild).
"""

from __future__ import annotations

from dataclasses import replace

from ..collision import Obstacle
from ..errors import IKNodeError
from ..solver import IKSolver
from .branch_choice import branch_refusal
from .parameters import NodeSettings, check_semantic_description, check_values
from .planning import Model, plan_model, solver_for_change

__all__ = ["ModelState"]


class ModelState:
    """``settings`` (the parameters; replace it whole when they change), ``model`` (None until a
    description is installed), why the last description or the model's solver was refused
    (``description_error``, ``solver_error``), the SRDF from the topic (``semantic_topic``) and the
    topic's obstacles (``topic_obstacles``, ``{name: Obstacle}`` in the base frame)."""

    def __init__(self, settings: NodeSettings):
        self.settings = settings
        self.model: Model | None = None
        self.description_error: str | None = None  # why the last description was refused
        self.solver_error: str | None = None  # why the model's solver could not be built
        self.semantic_topic = ""  # the latest SRDF from the topic
        self.topic_obstacles: dict[str, Obstacle] = {}  # by name ('ns/id' of the marker)

    @property
    def ready(self) -> bool:
        """Whether goals are solved now (a model with its solver)."""
        return self.model is not None and self.model.solver is not None

    def install(self, model: Model) -> None:
        """A new description's model (its solver follows): the refusals of the old one are
        forgotten."""
        self.model = model
        self.description_error = self.solver_error = None

    def candidate(self, values: dict, changed: frozenset) -> tuple[NodeSettings, Model | None]:
        """The settings and the model (with its solver when the kernels are ready: milliseconds)
        that new parameter ``values`` make, the parameters ``changed`` by name; raises
        :class:`IKNodeError` naming the parameter when they are refused (with a solver: a fixed
        ``branch`` the chain has no closed form for, once ``branch`` or the change makes it so)."""
        check_values(values)
        settings = NodeSettings.from_values(values)
        model = self.model
        if model is not None:
            model = self.plan(model.robot, settings, changed)
            if self.ready:
                model = replace(model, solver=solver_for_change(model))
                refused = branch_refusal(model.solver, settings.branch)
                # (a branch set at start-up that the chain cannot take is refused per goal instead)
                if refused and (
                    "branch" in changed or not branch_refusal(self.model.solver, self.settings.branch)
                ):
                    raise IKNodeError(refused)
        return settings, model

    def plan(self, robot, settings: NodeSettings | None = None, changed: frozenset | None = None) -> Model:
        """:func:`plan_model` with the SRDF and the topic's obstacles in use."""
        settings = self.settings if settings is None else settings
        semantic = settings.robot_description_semantic or self.semantic_topic
        return plan_model(robot, settings, changed, semantic, tuple(self.topic_obstacles.values()))

    @property
    def semantic_description(self) -> str:
        """The SRDF in use: the ``robot_description_semantic`` parameter, else the topic's."""
        return self.settings.robot_description_semantic or self.semantic_topic

    def receive_semantic(self, text: str, source: str) -> Model | None:
        """An SRDF from the topic: checked (raises :class:`IKNodeError` naming ``source``), kept,
        and the model it makes (its solver built when the kernels are ready; raises, the SRDF
        not kept, when that fails) to :meth:`apply` when it changes the solver (self_collision
        on, no SRDF parameter), else None."""
        check_semantic_description(text, source)
        previous, self.semantic_topic = self.semantic_topic, text
        if self.model is None or not self.settings.self_collision or self.settings.robot_description_semantic:
            return None
        try:
            model = self.plan(self.model.robot)
            if self.ready:
                model = replace(model, solver=solver_for_change(model))
        except IKNodeError as error:
            self.semantic_topic = previous
            raise IKNodeError(f"{source} refused: {error}") from None
        return model

    @property
    def obstacles(self) -> tuple[Obstacle, ...]:
        """Every obstacle the solver avoids: the parameters', then the topic's."""
        return (*self.settings.obstacles, *self.topic_obstacles.values())

    @property
    def checks_collisions(self) -> bool:
        """Whether answers are checked for collisions (self_collision, or any obstacle)."""
        return bool(self.settings.self_collision or self.obstacles)

    def set_topic_obstacles(self, obstacles: dict) -> None:
        """Replace the topic's obstacles (``{name: Obstacle}``); the solver avoids them from
        the next solve (no rebuild)."""
        self.topic_obstacles = dict(obstacles)
        self._sync_obstacles()

    def _sync_obstacles(self) -> None:
        """The solver's obstacles are :attr:`obstacles` (a solver built before the topic's
        latest change, or for other parameters, gets them here)."""
        model = self.model
        if model is None or model.solver is None:
            return
        obstacles = self.obstacles
        if tuple(model.solver.obstacles) != obstacles:
            model.solver.set_obstacles(obstacles)
        self.model = replace(model, options=replace(model.options, obstacles=obstacles))

    def apply(self, settings: NodeSettings, model: Model | None) -> bool:
        """Install a validated :meth:`candidate` (the model serves from the next solve). True when
        the mode or a rate changed (the node's timers)."""
        old, self.settings = self.settings, settings
        if model is not None:
            self.model = model
            self._sync_obstacles()
        return (settings.mode, settings.publish_rate, settings.joint_state_rate) != (
            old.mode,
            old.publish_rate,
            old.joint_state_rate,
        )

    def attach_solver(self, solver: IKSolver) -> None:
        """The model's solver is built: goals are solved from now on."""
        self.model = replace(self.model, solver=solver)
        self._sync_obstacles()
