# The learner's single-user image for the workshop hub (docker compose --profile workshop up -d).
# One image holds the pinned environment and the course; JupyterHub's DockerSpawner starts one
# container of it per learner and sets WORKBOOK_LEARNER and MONGODB_URI, so nobody types either.
FROM python:3.13-slim

ENV PIP_NO_CACHE_DIR=1 \
    WORKBOOK_SCALE=small \
    WORKBOOK_CACHE_DIR=/home/learner/.cache/workbook \
    WORKBOOK_PROGRESS_DIR=/home/learner/.workbook/progress

RUN useradd --create-home --uid 1000 learner
WORKDIR /opt/workbench
COPY pyproject.toml README.md ./
COPY workbook ./workbook
COPY datasets ./datasets
# The pinned environment: the package with its lab and hub extras (jupyterhub-singleuser comes with the hub extra).
RUN pip install '.[lab,hub]'
COPY --chown=learner:learner notebooks /home/learner/course

USER learner
WORKDIR /home/learner/course
EXPOSE 8888
CMD ["jupyterhub-singleuser", "--ip=0.0.0.0", "--port=8888"]
