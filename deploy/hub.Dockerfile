# The hub of the workshop profile: JupyterHub with DockerSpawner and the idle culler, pinned like pyproject.toml's hub extra.
FROM quay.io/jupyterhub/jupyterhub:5.4
RUN python3 -m pip install --no-cache-dir 'jupyterhub==6.1.1' 'dockerspawner==14.0.0' 'jupyterhub-idle-culler==2.0.0'
COPY deploy/jupyterhub_config.py /srv/jupyterhub/jupyterhub_config.py
WORKDIR /srv/jupyterhub
CMD ["jupyterhub", "-f", "/srv/jupyterhub/jupyterhub_config.py"]
