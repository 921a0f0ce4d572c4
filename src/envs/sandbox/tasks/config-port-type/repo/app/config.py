def load_config(env):
    return {"host": env.get("HOST", "localhost"), "port": env.get("PORT", 8080)}
