import { PageHeader } from '../components/ui';

export function Users() {
  return <PageHeader title="Users" />;
}
