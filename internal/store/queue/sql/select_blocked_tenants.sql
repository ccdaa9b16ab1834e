SELECT hubctl_tenants_with_due_jobs(@tenants::text[])
