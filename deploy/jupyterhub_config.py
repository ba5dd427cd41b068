"""JupyterHub for a workshop: `docker compose --profile workshop up -d` runs this file in the hub container.

Learners open http://<instructor-machine>:8000, log in with any name and the shared workshop password,
and get their own container of the learner image (built from the project's Dockerfile) with the course.
Each learner's server gets WORKBOOK_LEARNER from the hub user name and MONGODB_URI from the deployment.
"""

import os

c = get_config()  # type: ignore[name-defined]  # noqa: F821  (JupyterHub provides it)

# --- who logs in: a shared workshop password (JupyterHub >= 5.1) ---------------------------------------
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = os.environ["WORKSHOP_PASSWORD"]
if os.environ.get("WORKSHOP_ADMIN_PASSWORD"):  # 32 characters or more; the instructor logs in as WORKSHOP_ADMIN
    c.SharedPasswordAuthenticator.admin_password = os.environ["WORKSHOP_ADMIN_PASSWORD"]
c.Authenticator.admin_users = {os.environ.get("WORKSHOP_ADMIN", "instructor")}
c.Authenticator.allow_all = True

# --- each learner's server: one container of the learner image --------------------------------------
c.JupyterHub.spawner_class = "dockerspawner.DockerSpawner"
c.DockerSpawner.image = os.environ.get("LEARNER_IMAGE", "schema-workbench-learner:latest")
c.DockerSpawner.network_name = os.environ.get("DOCKER_NETWORK_NAME", "schema-workbench")
c.DockerSpawner.notebook_dir = "/home/learner/course"
c.DockerSpawner.default_url = "/lab/tree/00_start_here.ipynb"
c.DockerSpawner.remove = True  # a culled server's container goes; its progress is on the MongoDB server
c.DockerSpawner.mem_limit = os.environ.get("LEARNER_MEM_LIMIT", "1536M")
c.JupyterHub.hub_ip = "0.0.0.0"
c.JupyterHub.hub_connect_ip = "hub"  # the learner containers reach the hub by its compose service name

MONGODB_URI = os.environ.get("WORKSHOP_MONGODB_URI", "mongodb://mongo:27017/?directConnection=true")


def learner_environment(spawner):
    """WORKBOOK_LEARNER is the hub user name; nobody types it, so no typo splits a learner's progress."""
    return spawner.user.name


c.Spawner.environment = {
    "WORKBOOK_LEARNER": learner_environment,
    "MONGODB_URI": MONGODB_URI,
    "WORKBOOK_SCALE": os.environ.get("WORKBOOK_SCALE", "small"),
}

# --- idle servers are culled: a learner who leaves frees the memory ----------------------------------
c.JupyterHub.load_roles = [
    {
        "name": "jupyterhub-idle-culler-role",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["jupyterhub-idle-culler-service"],
    }
]
c.JupyterHub.services = [
    {
        "name": "jupyterhub-idle-culler-service",
        "command": [
            "python3",
            "-m",
            "jupyterhub_idle_culler",
            f"--timeout={os.environ.get('CULL_IDLE_SECONDS', '3600')}",
        ],
    }
]

# The hub's own state (users, cookie secret) lives on the hub-data volume, so a restart keeps logins.
c.JupyterHub.db_url = "sqlite:////srv/jupyterhub/data/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "/srv/jupyterhub/data/jupyterhub_cookie_secret"
