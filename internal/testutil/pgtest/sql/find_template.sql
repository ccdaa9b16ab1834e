SELECT true, datistemplate AND NOT datallowconn FROM pg_database WHERE datname = @name
