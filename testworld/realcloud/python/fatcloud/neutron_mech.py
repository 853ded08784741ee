"""An ML2 mechanism driver that binds every port, with no agent.

Nova needs a bound port to spawn; the usual drivers bind only where an
agent (Open vSwitch, Linux bridge) reports from the host, and those agents
would create bridges on this machine. Nothing carries traffic: ports stay
DOWN and the servers are not reachable, as docs/lab.md says.
"""

from neutron_lib.api.definitions import portbindings
from neutron_lib.plugins.ml2 import api

VIF_TYPE = "other"


class BindAllMechanismDriver(api.MechanismDriver):
    """Binds a port to its network's first segment."""

    def initialize(self):
        pass

    def bind_port(self, context):
        for segment in context.segments_to_bind:
            context.set_binding(segment[api.ID], VIF_TYPE,
                                {portbindings.CAP_PORT_FILTER: False})
            return
