from shared import config, config_docs


def test_the_readme_configuration_tables_are_generated_from_the_settings():
    readme = config_docs.README.read_text()
    assert config_docs.BEGIN in readme and config_docs.END in readme
    assert config_docs.updated(readme) == readme, "run `python -m shared.config_docs --write` and commit README.md"


def test_the_tables_name_every_variable():
    tables = config_docs.render()
    every_stage = {
        f"RAGMESH_{stage.upper()}_{name.upper()}": f"RAGMESH_<STAGE>_{name.upper()}"
        for stage in config.STAGES
        for name in config.ServerConfig.model_fields
        if name not in config.MeshSettings.model_fields
    }
    for variable in config.known_variables():
        assert f"`{every_stage.get(variable, variable)}`" in tables, variable
